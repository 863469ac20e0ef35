"""Each text's gates, each defined once (``-v5``): the pair's structure level, each role's own table and the
credit for the gates passed all read :func:`gate_problems`.

A gate reads one text on its own (and the source): it passes, or it names what is wrong in one feedback
sentence. Every gate reads the normalised text (:func:`.normalise.fold`: look-alike letters folded,
invisible characters removed); ``visible`` reads the text as written, because no honest text holds an
invisible character. The gates, in the order feedback names them:

- ``visible``: no zero-width or other invisible character;
- ``length``: words within the role's bounds; ``distinct``: not looping on a few words; ``prose``: enough
  function words; ``copy`` and ``copy_in_order``: not copied from the source, whole or (a text of at least
  :attr:`LMCheck.min_content_words` content words) with words left out;
- ``alphabet``: no word mixes alphabets; ``template``: not one repeated sentence frame; ``finished``: ends
  where a sentence can end; ``repeats``: does not say a long phrase again and again; ``loops``: does not
  say the same run of content words again however its stopwords vary; ``own_words``: does not string the
  source's content words together in its order;
- ``opening``: does not open with a connective that needs a sentence before it; ``source_order`` (second
  text only): does not tell the source's points in scrambled order;
- ``tags``: no chat-template tag; ``filler``: no sentence of nothing but connectives; ``retraction``: does
  not take itself back; ``retelling``: retells the source rather than advising, reviewing it or restating
  the task (:mod:`.text_jobs`).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable

from llm_coop_envs.writing import facts, text_jobs
from llm_coop_envs.writing import text_metrics as tm
from llm_coop_envs.writing.grounding import SourceProfile, function_word_share, in_order_share
from llm_coop_envs.writing.lexicon import STOPWORDS
from llm_coop_envs.writing.normalise import fold, invisible
from llm_coop_envs.writing.order import SourceSentences, concordance, dangling_opener
from llm_coop_envs.writing.thresholds import LevelConfig


@dataclasses.dataclass(frozen=True)
class Text:
    """One text as every gate reads it."""

    role: str
    position: int
    """0: the first role's text, 1: the second's."""
    written: str
    """The text as the policy wrote it (only ``visible`` reads it)."""
    whole: str
    """The normalised text with any dropped tail (what ``tags`` reads: a tag is never honest, read or not)."""
    plain: str
    """The normalised text: what every other gate, the claim check and the model read."""
    source: str
    """The normalised source."""
    source_name: str
    profile: SourceProfile | None
    config: LevelConfig

    @property
    def tail_dropped(self) -> bool:
        """The text stopped mid-sentence and is read up to its last finished sentence (``drop_unfinished_tail``)."""
        return len(self.plain) < len(self.whole)

    @functools.cached_property
    def words(self) -> list[str]:
        return tm.words(self.plain)

    @functools.cached_property
    def clauses(self) -> str:
        """The text with clauses after ``;`` and ``:`` as sentences (a text joined with semicolons is not one sentence)."""
        return re.sub(r"[;:]\s+", ". ", self.plain)


def _source_words(text: Text) -> list[str]:
    return _words_of(text.source)


@functools.lru_cache(maxsize=64)
def _words_of(source: str) -> list[str]:
    return tm.words(source)


def visible(text: Text) -> str | None:
    found = invisible(text.written)
    return f"holds {found} invisible character(s) (zero-width or format characters)" if found else None


def length(text: Text) -> str | None:
    low, high = (text.config.first_words, text.config.second_words)[text.position]
    return None if low <= len(text.words) <= high else f"has {len(text.words)} words; it needs {low}–{high}"


def distinct(text: Text) -> str | None:
    ratio, floor = tm.distinct_ratio(text.words), text.config.min_distinct_ratio
    return None if ratio >= floor else f"repeats itself (only {ratio:.0%} of its words are distinct; at least {floor:.0%} needed)"


def prose(text: Text) -> str | None:
    share, floor = function_word_share(text.words), text.config.min_function_word_share
    return None if share >= floor else (f"is a list of keywords, not sentences (function words are {share:.0%} of its words; "
                                        f"at least {floor:.0%} needed)")


def copy(text: Text) -> str | None:
    n, most = text.config.copy_ngram, text.config.max_copied_fraction
    fraction = tm.copied_fraction(text.words, tm.ngrams(_source_words(text), n), n)
    return None if fraction <= most else (f"copies the {text.source_name} ({fraction:.0%} of its {n}-word sequences appear "
                                          f"there; at most {most:.0%}): write in your own words")


def copy_in_order(text: Text) -> str | None:
    # As own_words: a short text (an author's one-line TL;DR) may retell a source sentence in its words and
    # order; the copy gate still catches it word for word. Hand-written honest TL;DRs of 13 words failed here.
    if sum(word not in STOPWORDS for word in text.words) < text.config.lm.min_content_words:
        return None
    share, most = in_order_share(text.words, _source_words(text)), text.config.max_in_order_share
    return None if share <= most else (f"copies the {text.source_name} with words left out ({share:.0%} of its words appear "
                                       f"there in the same order; at most {most:.0%}): write in your own words")


def alphabet(text: Text) -> str | None:
    mixed = facts.mixed_script_words(text.plain)
    return f"mixes alphabets inside words ({', '.join(mixed[:3])})" if mixed else None


def template(text: Text) -> str | None:
    share, most = facts.templated_share(text.plain), text.config.lm.max_templated
    return None if share <= most else f"repeats one sentence frame ({share:.0%} of its sentences; at most {most:.0%})"


def finished(text: Text) -> str | None:
    must_finish = text.config.lm.finished[text.position]
    cut = (must_finish and facts.unfinished(text.plain)) or facts.trails_off(text.plain)
    return "stops mid-sentence" if cut else None


def repeats(text: Text) -> str | None:
    check = text.config.lm
    share = check.repeated_share(text.words) or 0.0
    return None if share <= check.max_repeated else (f"repeats itself ({share:.0%} of its words are in {check.repeat_words}-word "
                                                     f"phrases it says more than once; at most {check.max_repeated:.0%})")


def own_words(text: Text) -> str | None:
    check = text.config.lm
    share, content_words = facts.content_in_order(text.plain, text.source)
    if content_words < check.min_content_words or share <= check.max_content_in_order:
        return None
    return (f"strings the {text.source_name}'s own words together in its order ({share:.0%} of its content words; "
            f"at most {check.max_content_in_order:.0%}): write in your own words")


def opening(text: Text) -> str | None:
    word = dangling_opener(text.clauses)
    return None if word is None else f"opens with {word!r}, which needs a sentence before it"


def second_text_concordance(text: Text) -> tuple[float | None, int]:
    """How the text's sentences follow the source's order (Kendall's tau, aligned pairs); (None, 0) unaligned."""
    if text.profile is None:
        return None, 0
    return concordance(text.clauses, _sentences_of(text.source), text.profile, text.config.order.min_share)


@functools.lru_cache(maxsize=64)
def _sentences_of(source: str) -> SourceSentences:
    return SourceSentences.build(source)


def source_order(text: Text) -> str | None:
    if text.position == 0:
        return None
    tau, pairs = second_text_concordance(text)
    order = text.config.order
    if tau is None or pairs < order.min_pairs or tau > order.max_reversed:
        return None
    return f"tells the {text.source_name}'s points against its order (concordance {tau:+.2f} over {pairs} pairs of sentences)"


def _first(problems: list[str]) -> str | None:
    # text_jobs phrases its problems as "it holds ...": here the role names the text.
    return re.sub(r"^it ", "", problems[0]) if problems else None


def tags(text: Text) -> str | None:
    return _first(text_jobs.template_tags(text.whole))


def filler(text: Text) -> str | None:
    return _first(text_jobs.filler_lines(text.plain))


def retraction(text: Text) -> str | None:
    return _first(text_jobs.retractions(text.plain))


def loops(text: Text) -> str | None:
    return _first(text_jobs.loops(text.plain))


def retelling(text: Text) -> str | None:
    return _first(text_jobs.not_a_retelling(text.plain, text.source))


GATES: dict[str, Callable[[Text], str | None]] = {
    "visible": visible, "length": length, "distinct": distinct, "prose": prose, "copy": copy,
    "copy_in_order": copy_in_order, "alphabet": alphabet, "template": template, "finished": finished,
    "repeats": repeats, "loops": loops, "own_words": own_words, "opening": opening, "source_order": source_order,
    "tags": tags, "filler": filler, "retraction": retraction, "retelling": retelling,
}
"""Every gate of a text, in the order feedback names them."""


def texts(roles: tuple[str, str], written: tuple[str, str], source: str, source_name: str,
          profile: SourceProfile | None, config: LevelConfig) -> tuple[Text, Text]:
    """The two texts of a pair as the gates read them (normalised once here)."""
    plain_source = fold(source)
    drop = config.lm.drop_unfinished_tail if config.lm is not None else (False, False)
    out = []
    for k, (role, text) in enumerate(zip(roles, written)):
        whole = fold(text)
        out.append(Text(role, k, text if isinstance(text, str) else "", whole, finished_part(whole) if drop[k] else whole,
                        plain_source, source_name, profile, config))
    return tuple(out)  # type: ignore[return-value]


_SENTENCE_END = re.compile(r"[.!?…][\"'”’)\]]*(?=\s)")


def finished_part(text: str) -> str:
    """``text`` up to the end of its last finished sentence when it stops mid-sentence; whole otherwise
    (also when it finished no sentence: ``finished`` then fails it)."""
    if not facts.unfinished(text):
        return text
    ends = list(_SENTENCE_END.finditer(text))
    return text[: ends[-1].end()] if ends else text


def gate_problems(text: Text) -> dict[str, str | None]:
    """Gate name -> what is wrong (None: passed), for every gate of :data:`GATES`. Never raises for any strings."""
    return {name: gate(text) for name, gate in GATES.items()}


def passed(problems: dict[str, str | None]) -> dict[str, bool]:
    """Gate name -> passed, the table the credit and each role's own reward read."""
    return {name: problem is None for name, problem in problems.items()}
