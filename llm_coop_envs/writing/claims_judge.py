"""An outside judge for the claim check: any OpenAI-compatible chat endpoint reads each claim against the source.

Off by default: :func:`.claims.check` is offline. A user with a stronger reader (a served model) passes a
:class:`ClaimsJudge` to :func:`judged`; the judge then gives every claim of the text its verdict, by the
same three kinds and the rubric in :data:`RUBRIC`, and the offline check answers only where the judge
could not (the endpoint failed or its answer was unusable: the reason is kept in ``JudgedClaims.error``).

The request holds the source, the text's claims as numbered sentences (one per clause the parser found,
so a sentence with two clauses is asked once) and the rubric; the judge answers with one JSON object.
Answers are cached by a hash of the request, as the grader's are (:mod:`.grader`, whose
:class:`~llm_coop_envs.writing.grader.GraderConfig` configures this judge too: endpoint, model, key
variable, timeouts, retries, size limits).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os

from llm_coop_envs.feedback.chat_client import ReviewerError, chat_completion
from llm_coop_envs.writing.claims import Verdict, check
from llm_coop_envs.writing.grader import EndpointReader, GraderError

RUBRIC = (
    "You check a text written from a source. For each numbered sentence of the text, decide:\n"
    "- contradicted: the source says otherwise: a fact negated or hedged away, who did what reversed, a "
    "value, unit or date changed or moved to another person or thing, a word replaced by its opposite, a "
    "statement made more certain than the source makes it, or a question that presupposes any of these;\n"
    "- unsupported: the source does not say it (an invented detail, opinion or advice);\n"
    "- supported: the source says it, in any words (a paraphrase, an abbreviation written out, a number in "
    "words, an equivalent unit).\n"
    "Judge only against the source, not against what you know. Answer with only a JSON object: "
    '{"verdicts": [{"sentence": 1, "verdict": "supported", "reason": "..."}, ...]} with one entry per sentence.'
)
"""What the judge is asked (part of the cache key: a changed rubric never reuses old answers)."""
KINDS = ("supported", "unsupported", "contradicted")


@dataclasses.dataclass(frozen=True)
class JudgedClaims:
    verdicts: list[Verdict]
    judged: bool
    """The outside judge gave these verdicts (False: the offline check did)."""
    error: str | None = None


class ClaimsJudge(EndpointReader):
    """Asks a chat endpoint for the verdicts; thread-safe, with a bounded cache keyed by request hash."""

    option = "claims_judge"

    def ask(self, sentences: list[str], source: str) -> dict[int, tuple[str, str]]:
        """Sentence number (from 1) → (verdict, reason); GraderError when the answer is unusable."""
        payload = self._payload(sentences, source)
        key = hashlib.sha256(json.dumps([RUBRIC, payload], sort_keys=True).encode("utf-8")).hexdigest()
        with self._lock:
            if key in self._cache:
                return dict(self._cache[key])
        config = self.config
        try:
            answer = chat_completion(config.url, payload, api_key=os.environ.get(config.api_key_env) if config.api_key_env else None,
                                     timeout_s=config.timeout_s, max_retries=config.max_retries, backoff_s=config.backoff_s,
                                     max_response_bytes=config.max_response_bytes)
        except ReviewerError as error:
            raise GraderError(f"claims judge unavailable: {error}") from None
        found = parse_verdicts(answer, len(sentences))
        with self._lock:
            self._cache[key] = found
            while len(self._cache) > config.cache_size:
                self._cache.popitem(last=False)
        return found

    def _payload(self, sentences: list[str], source: str) -> dict:
        clip = self.config.max_chars_per_part
        numbered = "\n".join(f"{k}. {sentence[:clip]}" for k, sentence in enumerate(sentences, 1))
        user = f"## Source\n{source[:clip]}\n\n## Sentences of the text\n{numbered}\n\nAnswer with only the JSON object."
        return {"model": self.config.model, "temperature": 0.0, "max_tokens": self.config.max_tokens,
                "messages": [{"role": "system", "content": RUBRIC}, {"role": "user", "content": user}]}

    def __deepcopy__(self, memo: dict) -> ClaimsJudge:
        return self  # env copies share one judge and its cache


def parse_verdicts(answer: str, count: int) -> dict[int, tuple[str, str]]:
    """The judge's verdicts by sentence number, or GraderError naming what is wrong."""
    start, end = answer.find("{"), answer.rfind("}")
    try:
        entries = json.loads(answer[start:end + 1]).get("verdicts") if 0 <= start < end else None
    except (ValueError, AttributeError):
        entries = None
    if not isinstance(entries, list):
        raise GraderError("the claims judge's answer holds no JSON object with a list of verdicts")
    found = {}
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("verdict") not in KINDS or not isinstance(entry.get("sentence"), int):
            raise GraderError("a verdict of the claims judge is not {sentence: int, verdict: one of " + ", ".join(KINDS) + "}")
        found[entry["sentence"]] = (entry["verdict"], str(entry.get("reason", ""))[:300])
    missing = set(range(1, count + 1)) - set(found)
    if missing:
        raise GraderError(f"the claims judge gave no verdict for sentence(s) {sorted(missing)}")
    return found


def judged(text: str, source: str, judge: ClaimsJudge | None = None) -> JudgedClaims:
    """The verdicts on ``text``'s claims: the judge's where one is given and answers, else the offline check's."""
    offline = check(text, source)
    if judge is None or not offline:
        return JudgedClaims(offline, False)
    sentences = list(dict.fromkeys(verdict.claim.sentence.strip() for verdict in offline))
    try:
        answers = judge.ask(sentences, source)
    except GraderError as error:
        if judge.config.on_error == "raise":
            raise
        return JudgedClaims(offline, False, str(error))
    number = {sentence: k for k, sentence in enumerate(sentences, 1)}
    verdicts = [dataclasses.replace(v, kind=answers[number[v.claim.sentence.strip()]][0],
                                    reason="judge: " + answers[number[v.claim.sentence.strip()]][1]) for v in offline]
    return JudgedClaims(verdicts, True)
