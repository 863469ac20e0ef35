"""Exact text checks of the ``-v3`` writing rewards: look-alike letters, facts a policy can flip, templates.

- :func:`skeleton` maps look-alike letters of other alphabets (Cyrillic, Greek, fullwidth forms) to
  the Latin letter they imitate, so copy gates compare what a reader sees; :func:`mixed_script_words`
  finds words that mix alphabets (no honest English word does).
- :func:`fact_problems` compares a text with its source: numbers and names the source does not
  have, statements whose negation is flipped against the source sentence they restate, words
  replaced by their opposite, and statements the source makes plainly that the text denies in other
  words (:func:`denied_statements`).
- :func:`templated_share` finds texts built from one repeated sentence frame; :func:`unfinished`
  finds a text that stops mid-sentence.

All functions take any strings and never raise.
"""

from __future__ import annotations

import collections
import re
import unicodedata

from llm_coop_envs.writing import text_metrics as tm
from llm_coop_envs.writing.lexicon import STOPWORDS

# Letters drawn like Latin ones: what a homoglyph copy swaps in to slip past word matching.
_CONFUSABLE = str.maketrans({
    **dict(zip("АВЕКМНОРСТХаеорсухіјѕԁԛԝҮүӏІЈЅ", "ABEKMHOPCTXaeopcyxijsdqwYylIJS")),
    **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧαιοκνρτυχ", "ABEZHIKMNOPTYXaiokvptux")),
})
_SCRIPTS = ("LATIN", "CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE")


def skeleton(text: str) -> str:
    """``text`` with compatibility forms folded (NFKC) and look-alike letters mapped to Latin ones."""
    return unicodedata.normalize("NFKC", text).translate(_CONFUSABLE)


def _script(char: str) -> str | None:
    name = unicodedata.name(char, "")
    return next((s for s in _SCRIPTS if name.startswith(s)), None)


def mixed_script_words(text: str) -> list[str]:
    """Words whose letters come from more than one alphabet (``pаper`` with a Cyrillic ``а``)."""
    out = []
    for word in re.findall(r"\w+", unicodedata.normalize("NFKC", text)):
        scripts = {_script(c) for c in word if c.isalpha()} - {None}
        if len(scripts) > 1:
            out.append(word)
    return out


# --- facts ---------------------------------------------------------------------------------------

_NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40,
    "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000,
    "first": 1, "second": 2, "third": 3, "half": 0.5, "twice": 2, "double": 2, "dozen": 12,
}
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*")
_NEGATIONS = frozenset("not no never nor nobody nothing none neither cannot nowhere without".split())
# Word pairs whose swap turns a statement into its opposite (both directions are checked).
_OPPOSITES = dict(
    pair for a, b in (
        ("increase", "decrease"), ("increases", "decreases"), ("increased", "decreased"), ("higher", "lower"),
        ("larger", "smaller"), ("large", "small"), ("more", "less"), ("most", "least"), ("rich", "poor"),
        ("older", "younger"), ("before", "after"), ("always", "never"), ("above", "below"), ("strong", "weak"),
        ("stronger", "weaker"), ("positive", "negative"), ("success", "failure"), ("love", "hate"),
        ("loves", "hates"), ("like", "dislike"), ("likes", "dislikes"), ("accept", "reject"), ("accepted", "rejected"),
        ("agree", "disagree"), ("agreed", "refused"), ("want", "refuse"), ("wants", "refuses"), ("wanted", "refused"),
        ("cheap", "expensive"), ("bright", "faint"), ("hate", "love"), ("allowed", "forbidden"), ("alive", "dead"), ("fast", "slow"), ("faster", "slower"), ("early", "late"),
        ("earlier", "later"), ("high", "low"), ("good", "bad"), ("better", "worse"), ("best", "worst"),
        ("happy", "unhappy"), ("possible", "impossible"), ("consistent", "inconsistent"), ("stable", "unstable"),
        ("male", "female"), ("man", "woman"), ("boyfriend", "girlfriend"), ("husband", "wife"), ("win", "lose"), ("won", "lost"), ("open", "closed"), ("true", "false"),
        ("include", "exclude"), ("includes", "excludes"), ("confirm", "refute"), ("confirms", "refutes"),
        ("enhances", "suppresses"), ("enhanced", "suppressed"), ("maximum", "minimum"), ("heavy", "light"),
    ) for pair in ((a, b), (b, a))
)
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+|\n+")


def numbers(text: str) -> set[float]:
    """The numbers a text states: numerals (``2.5``, ``1,000``) and number words (``two``)."""
    found = set()
    for match in _NUMBER.findall(text):
        try:
            found.add(float(match.replace(",", "")))
        except ValueError:
            continue
    found.update(_NUMBER_WORDS[w] for w in tm.words(text) if w in _NUMBER_WORDS)
    return found


def _source_numbers(source: str) -> set[float]:
    """The source's numbers, read leniently (``v3.2``, ``[18M]``), each also split at commas and decimal points."""
    found = numbers(source)
    for match in re.findall(r"\d+(?:[.,]\d+)*", source):
        found.update(float(part) for part in re.split(r"[.,]", match) if part)
        try:
            found.add(float(match.replace(",", "")))
        except ValueError:
            continue
    return found


def _stated(value: float, decimals: int, known: set[float]) -> bool:
    """The value is a source number, or one rounded to the text's precision (0.927 written as 0.93)."""
    return value in known or any(round(k, decimals) == value for k in known)


def unknown_numbers(text: str, source: str) -> list[str]:
    """Numerals in the text whose value the source does not state (number words are too vague to hold against it)."""
    known = _source_numbers(source)
    out = []
    for match in _NUMBER.findall(text):
        try:
            value = float(match.replace(",", ""))
        except ValueError:
            continue
        decimals = len(match.split(".", 1)[1]) if "." in match else 0
        if not _stated(value, decimals, known):
            out.append(match)
    return out


_ROMAN = re.compile(r"[IVXLC]+")


def names(text: str) -> list[str]:
    """Capitalised words that are not the first word of a sentence and not common words: names."""
    out = []
    for sentence in _SENTENCE_END.split(text):
        tokens = re.findall(r"[\w'’-]+", sentence)
        for token in tokens[1:]:
            if token[:1].isupper() and token.lower() not in STOPWORDS and len(token) > 1 and not token.isupper():
                out.append(token)
            elif token.isupper() and len(token) > 2 and token.isalpha() and not _ROMAN.fullmatch(token):
                out.append(token)  # acronyms (two letters are too often TV, FB, OP)
    return out


def unknown_names(text: str, source: str) -> list[str]:
    """Names in the text that occur nowhere in the source: each capitalised part (``Jupiter-sized``: Jupiter)
    is looked for as a source word's beginning, or inside the source with spaces removed (``Face timing``)."""
    source_words = set(tm.words(source)) | _EVERYWHERE
    squeezed = re.sub(r"\W+", "", source.lower())
    out = []
    for name in names(text):
        for part in re.split(r"[-'’]", name):
            if not part[:1].isupper():
                continue
            key = part.lower()
            stem = key[: max(4, len(key) - 3)]
            if stem not in squeezed and not any(w.startswith(stem) for w in source_words):
                out.append(name)
                break
    return out


_EVERYWHERE = frozenset("reddit op edit update tldr tl dr ama".split())
"""Names every post may use without its source naming them (the site, its jargon)."""


def _sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(text) if s.strip()]


def _aligned(sentence_stems: set[str], source_sentences: list[tuple[str, set[str]]], min_share: float):
    """The source sentence that shares the most of this sentence's content stems, if enough."""
    best, best_share = None, 0.0
    for source_sentence, stems in source_sentences:
        shared = len(sentence_stems & stems) / len(sentence_stems) if sentence_stems else 0.0
        if shared > best_share:
            best, best_share = source_sentence, shared
    return best if best_share >= min_share else None


_MODALS = frozenset("do does did is are was were has have had can could would should wo must need ca isn".split())


def _is_negation(word: str) -> bool:
    return word in _NEGATIONS or (word.endswith("nt") and word[:-2] in _MODALS)


_CONTEXT = 2
"""Content words (besides the flipped one) a source sentence must share with the text's sentence to be the statement it restates."""
_HYPOTHETICAL = frozenset("if unless wish would could might".split())
_WITH_AND_WITHOUT = re.compile(r"\bwith\s+(?:and|or)\s+without\b", re.IGNORECASE)


def polarity(text: str, scope: int = 3) -> tuple[set[str], set[str]]:
    """(stems said under a negation, stems said plainly): the first content word within ``scope`` words
    after a negation, in the same clause, is negated ("does not like money": like), every other content
    word is plain. Contractions other than negations ("he'll") and names are not content words."""
    negated, plain = set(), set()
    pending = 0
    for token in re.findall(r"\w+(?:['’]\w+)*|[,;:()]", _WITH_AND_WITHOUT.sub("with", text)):
        if not token[0].isalnum() and token[0] != "_":
            pending = 0  # a negation does not reach past the clause
            continue
        word = token.lower().replace("'", "").replace("’", "")
        if _is_negation(word):
            pending = scope
            continue
        # Names are not statements: "doesn't like Mary's chest" negates the liking, not Mary.
        content = (word not in STOPWORDS and not word.isdigit() and len(word) > 1 and not token[:1].isupper()
                   and ("'" not in token and "’" not in token))
        if content and pending:
            negated.add(tm.stem(word))
            pending = 0
        elif content:
            plain.add(tm.stem(word))
        else:
            pending = max(0, pending - 1)
    return negated, plain


def flipped_statements(text: str, source: str, min_share: float = 0.5) -> list[str]:
    """Statements whose polarity the text flips against the source sentence they restate (the one that
    shares most of their content words): a word that sentence says plainly now negated, a word it
    negates now said plainly, or a word replaced by its opposite."""
    source_sentences = [(s, tm.content_stems(tm.words(s))) for s in _sentences(source)]
    out = []
    for sentence in _sentences(text):
        if sentence.rstrip().endswith("?"):
            continue  # a question asserts nothing
        words = tm.words(sentence)
        match = _aligned(tm.content_stems(words), source_sentences, min_share)
        if match is None:
            continue
        (negated, plain), (their_negated, their_plain) = polarity(sentence), polarity(match)
        out += [f"not {w}" for w in sorted(negated & their_plain - their_negated)]
        out += [f"{w} (the source: not {w})" for w in sorted(plain & their_negated - their_plain - negated)]
        theirs = set(tm.words(match))
        out += [f"{w} (the source: {_OPPOSITES[w]})" for w in words
                if w in _OPPOSITES and w not in theirs and _OPPOSITES[w] in theirs]
    return out


def contradicted_words(text: str, source: str) -> list[str]:
    """Statements a paraphrase flips against the source, found word by word: a content word the text
    negates where the source says it only plainly (or says plainly where the source only negates it),
    or a word whose opposite the source says plainly, each only when the source sentence saying it shares
    another content word with the text's sentence (the same statement, not the same word elsewhere)."""
    parts = []
    for sentence in _sentences(source):
        negated, plain = polarity(sentence)
        if _HYPOTHETICAL & set(tm.words(sentence)):
            # "if only I could say hi": neither said nor denied; nothing is held against it
            negated = plain = negated | plain
        parts.append((negated, plain - negated if not negated >= plain else plain, negated | plain))
    source_negated = set().union(*(n for n, _, _ in parts)) if parts else set()
    source_plain = set().union(*(p for _, p, _ in parts)) if parts else set()
    source_words = set(tm.words(source))
    out = []
    for sentence in _sentences(text):
        if sentence.rstrip().endswith("?"):
            continue
        negated, plain = polarity(sentence)
        stems = negated | plain

        def said(stem: str, where: int) -> bool:
            # a source sentence says ``stem`` (plainly: where=1, negated: where=0) next to another word of ours
            return any(stem in part[where] and len((stems - {stem}) & part[2]) >= _CONTEXT for part in parts)

        out += [f"not {w}" for w in sorted(negated) if w not in source_negated and said(w, 1)]
        out += [f"{w} (the source: not {w})" for w in sorted(plain - negated) if w not in source_plain and said(w, 0)]
        for word in dict.fromkeys(tm.words(sentence)):
            opposite = _OPPOSITES.get(word)
            if opposite is None or word in source_words or opposite not in source_words:
                continue
            key = tm.stem(opposite)
            if key in source_plain and key not in source_negated and said(key, 1):
                out.append(f"{word} (the source: {opposite})")
    return out


def swapped_names(text: str, source: str) -> list[str]:
    """Names put in each other's place (who did what): the text writes a source name next to a word
    ("boyfriend Joe") where the source writes another name of the text there, and never this one."""
    text_names = set(re.findall(r"\b[A-Z][\w'’-]*", text)) & set(names(source))
    if len(text_names) < 2:
        return []

    def neighbours(body: str) -> dict[tuple[str, int], set[str]]:
        found: dict[tuple[str, int], set[str]] = {}
        for sentence in _SENTENCE_END.split(body):
            tokens = re.findall(r"[\w'’-]+", sentence)
            for i, token in enumerate(tokens):
                if token not in text_names:
                    continue
                for side in (-1, 1):
                    j = i + side
                    if 0 <= j < len(tokens) and tokens[j].islower() and tokens[j] not in STOPWORDS:
                        found.setdefault((tokens[j], side), set()).add(token)
        return found

    theirs = neighbours(source)
    out = []
    for key, names_here in neighbours(text).items():
        there = theirs.get(key, set())
        out += [f"{name} {key[0]}" for name in sorted(names_here) if there and name not in there]
    return out


_DOUBLED = re.compile(r"\b(?:not|never)\s+(?:\w+\s+)?(?:neither|never|no|not|nobody|nothing|none|nor)\b", re.IGNORECASE)


def doubled_negations(text: str) -> list[str]:
    """Negations stacked on one statement ("is not neither rich", "not almost no"): a flipped polarity
    that no longer reads as either statement."""
    return [m.group() for m in _DOUBLED.finditer(text)]


_DENIALS = frozenset("not no never nobody nothing none neither nor cannot".split())
"""Negations that deny what follows them ("without", "nowhere" are left out: "without assuming a model"
restates "model independent", "out of nowhere" denies nothing)."""
_DENIED_WORDS = 3
"""A negation denies the first this many content words after it, in its clause."""
_CLAUSE_WORDS = frozenset(
    "and but or yet because cause cuz so while although though whereas since when if unless whether".split())
"""Words that end a clause: a negation does not reach past them, nor does a hypothetical."""
_ATTITUDES = frozenset(
    "want wants wanted know knew knows think thought like liked likes care cared cares mind believe feel felt "
    "wish need needs needed hope expect mean meant seem seems seemed sure understand remember see saw".split())
"""Denied attitudes ("I don't want to end up the bad guy") state no fact of the source."""
_NOT_DENIALS = frozenset("only just merely simply matter all every always necessarily more less fewer".split())
"""Words that turn a negation into something else right after it ("not only ... but also", "no matter", "not
all of them", "no more than")."""
_UNSURE = _HYPOTHETICAL | frozenset("may maybe perhaps should whether".split())
"""Words of a clause that states no fact ("people may not make eye contact")."""
_DENYING = frozenset(
    "without lack lacks lacked lacking fail fails failed failing failure unable refuse refuses refused refusing "
    "hardly barely rarely seldom zero nowhere instead absence absent against deny denies denied avoid avoids "
    "avoided stop stops stopped prevent prevents prevented doubt hard difficult impossible unlikely unknown unclear "
    "unaware".split())
"""Words that deny a statement without a negation: a source passage with one of them is not plain."""
_WRITER = frozenset("poster op author authors paper article abstract".split())
"""Words about the writer or the document, not about what the source says."""
_PHRASE_SPAN = 6
"""The denied words the source has must lie within this many words of each other (one phrase)."""
_DENIAL_TOKEN = re.compile(r"\w+(?:['’]\w+)*|[,;:()]")


def _clauses(sentence: str) -> list[tuple[str | None, list[str]]]:
    """(the word that opened the clause, the clause's lower-case words, apostrophes dropped), split at
    punctuation and at the words of :data:`_CLAUSE_WORDS`."""
    out: list[tuple[str | None, list[str]]] = []
    opener, current = None, []
    for token in _DENIAL_TOKEN.findall(_WITH_AND_WITHOUT.sub("with", sentence)):
        word = token.lower().replace("'", "").replace("’", "")
        if not token[0].isalnum() and token[0] != "_" or word in _CLAUSE_WORDS:
            if current:
                out.append((opener, current))
            opener, current = (word if word in _CLAUSE_WORDS else None), []
        else:
            current.append(word)
    if current:
        out.append((opener, current))
    return out


def _content_stem(word: str) -> str | None:
    if word in STOPWORDS or word in _WRITER or word.isdigit() or len(word) < 2 or _is_negation(word):
        return None
    return tm.stem(word)


def _denial(opener: str | None, words: list[str], stems: list[str | None]) -> tuple[int, list[str]] | None:
    """(where, the stems of the first content words it denies) for the first negation of a clause that states a
    fact: not under "if" or "may", not "not only", not on an attitude ("I don't want ..."); None otherwise."""
    at = next((i for i, w in enumerate(words) if _denies(w)), None)
    if at is None or at + 1 >= len(words) or words[at + 1] in _NOT_DENIALS:
        return None
    if opener in ("if", "unless", "whether") or _UNSURE & set(words):
        return None
    denied = [(w, s) for w, s in zip(words[at + 1 :], stems[at + 1 :]) if s][:_DENIED_WORDS]
    if not denied or denied[0][0] in _ATTITUDES:
        return None
    return at, [s for _, s in denied]


def denied_statements(text: str, source: str) -> list[str]:
    """Statements the source makes plainly that the text denies in other words ("the strong field is not
    explained mainly by the gravitational collapse" where the source says it "is mainly attributed to
    the gravitational core collapse"): a negation in a text sentence (not on an attitude such as "want",
    not under "if" or "may") whose next content words, two of the first three, form one phrase of a
    source sentence that says, before that phrase, what the text says before the negation (two of those
    words, or one the source uses in that sentence only), where the source passage has no negation, no
    denying word ("refused", "lack", "without") and nothing hypothetical, and no source clause denies any
    of these words itself. Statements the source does not make are never held against the text."""
    sentences, denied_there = [], set()
    for sentence in _sentences(source):
        if sentence.rstrip().endswith("?"):
            continue  # a question asserts nothing
        words: list[str] = []
        for _, clause in _clauses(sentence):
            stems = [_content_stem(w) for w in clause]
            for at, word in enumerate(clause):  # every denial counts here, hypothetical or not
                if _denies(word) or word in _DENYING:
                    denied_there.update([s for s in stems[at + 1 :] if s][:_DENIED_WORDS])
            words += clause
        sentences.append((words, [_content_stem(w) for w in words]))
    counts = collections.Counter(s for _, stems in sentences for s in set(stems) if s)
    out = []
    for sentence in _sentences(text):
        if sentence.rstrip().endswith("?"):
            continue
        before: set[str] = set()
        for opener, words in _clauses(sentence):
            stems = [_content_stem(w) for w in words]
            found = _denial(opener, words, stems)
            if found and not denied_there & set(found[1]):
                said = before | {s for s in stems[: found[0]] if s}
                if _plainly_said(set(found[1]), said, sentences, counts):
                    out.append(f"not {found[1][0]}")
            before |= {s for s in stems if s}
    return list(dict.fromkeys(out))


def _plainly_said(denied: set[str], said: set[str], sentences, counts) -> bool:
    """A source sentence has two of the denied words within a few words of each other and, before them, two of
    the said ones (or one said word found in no other source sentence), and the passage from just before the
    first said word to the end of the sentence has no negation, no denying word and nothing hypothetical (a
    negation after the phrase may deny it too: "a condition, given that the data are X, is not sufficient")."""
    for words, stems in sentences:
        hits = [k for k, s in enumerate(stems) if s in denied]
        phrase = next((i for i in hits for j in hits if i < j <= i + _PHRASE_SPAN and stems[i] != stems[j]), None)
        if phrase is None:
            continue
        hit_said = {s for s in stems[:phrase] if s in said and s not in denied}
        if not (len(hit_said) >= 2 or any(counts[s] == 1 for s in hit_said)):
            continue
        start = next(k for k, s in enumerate(stems) if s in hit_said)
        passage = words[max(0, start - 3) :]
        if not any(_denies(w) or w in _DENYING or w in _UNSURE for w in passage):
            return True
    return False


def _denies(word: str) -> bool:
    return word in _DENIALS or (word.endswith("nt") and word[:-2] in _MODALS)


def fact_problems(text: str, source: str) -> dict[str, list[str]]:
    """Every exact disagreement of a text with its source, by kind (empty lists when none)."""
    flipped = flipped_statements(text, source) + doubled_negations(text)
    flipped += [f for f in contradicted_words(text, source) if f not in flipped]
    flipped += [f for f in denied_statements(text, source) if f not in flipped]
    return {
        "numbers": unknown_numbers(text, source),
        "names": unknown_names(text, source) + swapped_names(text, source),
        "flipped": flipped,
    }


def content_in_order(text: str, source: str) -> tuple[float, int]:
    """(share of the text's content words found in the source in the same order, content words): near 1.0
    for the source's words glued back in its order (fragments, a reworded copy), 0.1-0.8 for a summary."""
    from llm_coop_envs.writing.grounding import in_order_share

    def content(body: str) -> list[str]:
        return [tm.stem(w) for w in tm.words(body) if w not in STOPWORDS and not w.isdigit() and len(w) > 1]

    own = content(text)
    return (in_order_share(own, content(source)) if own else 0.0), len(own)


# --- form ----------------------------------------------------------------------------------------

def _frame(sentence: str) -> tuple[str, ...]:
    """A sentence's frame: its function words in order, content words blanked."""
    return tuple(w if w in STOPWORDS else "_" for w in tm.words(sentence))


def templated_share(text: str) -> float:
    """Share of a text's sentences (or lines) that repeat the most common sentence frame; 0 below 3 sentences."""
    parts = [p for p in re.split(r"(?<=[.!?;])\s+|\n+", text) if len(tm.words(p)) >= 3]
    if len(parts) < 3:
        return 0.0
    frames = collections.Counter(_frame(p) for p in parts)
    return frames.most_common(1)[0][1] / len(parts)


_TRAILING = frozenset("a an the of and or but nor with for from by my your our their its which because if than into".split())


def trails_off(text: str) -> bool:
    """The text stops on a word no sentence ends with (an article, a preposition, a conjunction): cut off,
    even where a missing final stop is allowed (an author's TL;DR)."""
    stripped = text.rstrip().rstrip("\"'”’)]*_")
    if not stripped or stripped[-1] in ".!?…":
        return False
    last = re.findall(r"[\w']+", stripped[-40:].lower())
    return bool(last) and last[-1] in _TRAILING


def unfinished(text: str) -> bool:
    """The text stops mid-sentence: its last character (closing quotes and brackets aside) ends no sentence."""
    stripped = text.rstrip().rstrip("\"'”’)]*_")
    return bool(stripped) and stripped[-1] not in ".!?…"
