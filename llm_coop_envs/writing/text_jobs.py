"""Does each text do its job? The checks of the ``-v5`` gates a text passes on its own (``claims`` extra).

Each function takes a text (and the source where it needs one) and returns the problems it finds, as
feedback sentences; an empty list passes. Every check reads the folded text (:func:`.normalise.fold`).

- :func:`invisible_characters`: any zero-width or other invisible character (no honest text has one);
- :func:`template_tags`: a chat-template or end-of-text tag (``<|im_end|>``, ``[INST]``, ``</s>``, ...);
- :func:`filler_lines`: a sentence of two or more transition phrases and nothing but function words
  ("However, moreover, thus.");
- :func:`retractions`: a sentence that takes back the text itself ("None of the above is true.");
- :func:`loops`: the same run of content words said again and again, however the stopwords between them vary;
- :func:`not_a_retelling`: most sentences give advice, review the source or restate the task instead of
  retelling what the source says;
- :func:`coverage`: the share of the source's claims the pair retells, for the pair's coverage term.
"""

from __future__ import annotations

import functools
import re

from llm_coop_envs.writing import text_metrics as tm
from llm_coop_envs.writing.lexicon import STOPWORDS, TRANSITIONS
from llm_coop_envs.writing.normalise import fold, invisible

_TAG = re.compile(r"<\|[^|<>]{1,40}\|>|</?s>|\[/?INST\]|<</?SYS>>|<(?:start|end)_of_turn>|^#{2,4}\s*(?:Response|Instruction)\s*:",
                  re.IGNORECASE | re.MULTILINE)
_CONNECTIVES = frozenset(w for phrases in TRANSITIONS.values() for phrase in phrases for w in phrase.split())
_RETRACTION = re.compile(
    r"\b(?:(?:none|nothing) of (?:this|that|the above|it|what i (?:said|wrote))\b.{0,30}\b(?:true|happened|correct|accurate)"
    r"|(?:the above|this summary|this text|everything (?:above|i (?:said|wrote))|all of (?:this|the above)|what i (?:said|wrote))"
    r"\s+(?:is|was|are|were)\s+(?:not true|false|wrong|incorrect|untrue|made up|a lie|fiction|inaccurate)"
    r"|ignore (?:all |everything )?(?:of )?(?:the |this )?(?:above|previous|preceding)"
    r"|(?:i take (?:it|that|this|everything) back|scratch that|just kidding|disregard (?:the|this|everything)))",
    re.IGNORECASE)
_REVIEW_NOUNS = frozenset("post story author writer summary article paper abstract text op poster read".split())
_EVALUATIVE = frozenset(
    "great good interesting well-written compelling engaging excellent helpful insightful clear fascinating amazing "
    "poor bad boring informative thoughtful relatable powerful important valuable nice awesome enjoyable".split())
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")
LOOP_WORDS = 4
"""A loop repeats runs of this many content words."""
MAX_LOOPED = 0.3
"""At most this share of a text's content words may sit in runs it says more than once."""
MAX_OFF_JOB = 0.5
"""At most this share of a text's sentences may advise, review or restate the task."""


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.findall(fold(text)) if any(c.isalnum() for c in s)]


def invisible_characters(text: str) -> list[str]:
    found = invisible(text)
    return [f"it holds {found} invisible character(s) (zero-width or format characters)"] if found else []


def template_tags(text: str) -> list[str]:
    tags = sorted(set(_TAG.findall(fold(text))))
    return [f"it holds chat-template tags ({', '.join(tags[:3])})"] if tags else []


def filler_lines(text: str) -> list[str]:
    filler = [s for s in sentences(text) if len(tm.transitions(tm.words(s))) >= 2
              and all(w in STOPWORDS or w in _CONNECTIVES for w in tm.words(s))]
    return [f"it has sentences with nothing in them but connectives ({filler[0]!r})"] if filler else []


def retractions(text: str) -> list[str]:
    found = _RETRACTION.search(fold(text))
    return [f"it takes itself back ({found.group(0)!r})"] if found else []


def looped_share(text: str, n: int = LOOP_WORDS) -> float:
    """Share of the text's content words inside runs of ``n`` content words that occur more than once
    (stopwords removed first, so a loop that varies its stopwords is still a loop)."""
    content = [w for w in tm.words(fold(text)) if w not in STOPWORDS]
    grams = [tuple(content[i:i + n]) for i in range(len(content) - n + 1)]
    seen: dict[tuple, int] = {}
    for gram in grams:
        seen[gram] = seen.get(gram, 0) + 1
    covered = set()
    for i, gram in enumerate(grams):
        if seen[gram] > 1:
            covered.update(range(i, i + n))
    return len(covered) / len(content) if content else 0.0


def loops(text: str) -> list[str]:
    share = looped_share(text)
    if share <= MAX_LOOPED:
        return []
    return [f"it says the same thing again and again ({share:.0%} of its content words are in {LOOP_WORDS}-word runs "
            f"it repeats; at most {MAX_LOOPED:.0%})"]


@functools.lru_cache(maxsize=1)
def task_words() -> frozenset[str]:
    """The content words of the writing prompts' own instructions (without any source): what a text that
    restates its task is made of."""
    from llm_coop_envs.writing.items import Item
    from llm_coop_envs.writing.prompts import background_prompt, detail_prompt, method_prompt, tldr_prompt
    from llm_coop_envs.writing.thresholds import ARXIV_LEVELS, TLDR_LEVELS

    empty = Item(id="", source="")
    text = " ".join([tldr_prompt(empty, TLDR_LEVELS), detail_prompt(empty, TLDR_LEVELS),
                     background_prompt(empty, ARXIV_LEVELS), method_prompt(empty, ARXIV_LEVELS)])
    return frozenset(w for w in tm.words(text) if w not in STOPWORDS and not w.isdigit())


def _off_job(sentence: str, source_words: frozenset[str]) -> bool:
    words = tm.words(sentence)
    if not words:
        return False
    advice = words[0] in ("try", "consider", "make", "remember", "don't", "do", "always", "never", "ask", "talk",
                          "tell", "stop", "keep", "find", "let") or bool(re.match(r"\s*you\s+(?:should|could|need|must|might want)", sentence, re.I))
    review = bool(set(words) & _REVIEW_NOUNS and set(words) & _EVALUATIVE)
    restated = len({w for w in words if w in task_words() and w not in source_words}) >= 3
    return advice or review or restated


def not_a_retelling(text: str, source: str) -> list[str]:
    said = sentences(text)
    source_words = frozenset(tm.words(fold(source)))
    off = [s for s in said if _off_job(s, source_words)]
    if not said or len(off) / len(said) <= MAX_OFF_JOB:
        return []
    return [f"it advises, reviews or restates the task instead of retelling the source ({len(off)} of {len(said)} "
            f"sentences, e.g. {off[0][:80]!r})"]


def coverage(texts: tuple[str, ...], source: str) -> float:
    """Share of the source's sentences (with at least two content words) of which the texts together
    retell at least half the content stems: how much of the source the pair tells."""
    told = set().union(*(tm.content_stems(tm.words(fold(t))) for t in texts))
    parts = [stems for stems in (tm.content_stems(tm.words(s)) for s in sentences(source)) if len(stems) >= 2]
    if not parts:
        return 0.0
    return sum(len(stems & told) >= len(stems) / 2 for stems in parts) / len(parts)
