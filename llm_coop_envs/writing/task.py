"""WritingTask: the :class:`~llm_coop_envs.core.task.Task` shared by the two writing envs.

A :class:`WritingSpec` says what differs between them (roles, prompts, how rows become items,
whether ROUGE against a reference is scored); the task holds the items, the level configuration
and the resolved ``reward=`` (:mod:`llm_coop_envs.core.reward_fns`).
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from typing import Any

from llm_coop_envs.core import Evaluation, RewardResult
from llm_coop_envs.core.reward_fns import resolve_reward
from llm_coop_envs.writing.thresholds import LevelConfig
from llm_coop_envs.writing.grounding import Salience, SourceProfile
from llm_coop_envs.writing.items import Item
from llm_coop_envs.writing.grader import Grades, WritingGrader
from llm_coop_envs.writing.lm import LanguageModel
from llm_coop_envs.writing import chain, claims
from llm_coop_envs.writing.claims_judge import ClaimsJudge
from llm_coop_envs.writing.lm_levels import requests_if_scored, score_pair_v3
from llm_coop_envs.writing.reward import PairScore, PairTexts, gates_passed_by_role, score_pair
from llm_coop_envs.writing.text_gates import text_gates

REWARD_MODES = ("joint", "per_agent")


@dataclasses.dataclass(frozen=True)
class WritingSpec:
    name: str
    agents: tuple[str, str]
    source_name: str
    prompts: Mapping[str, Callable[[Item, LevelConfig], str]]
    uses_reference: bool
    """Score ROUGE of the first role's text against the item's reference (TL;DR)."""
    description: str = ""
    """What each role writes, in one sentence (shown to the grader)."""


class WritingTask:
    """Two roles write complementary texts from one source; scored by the gated levels.

    ``reward_mode="per_agent"`` also gives each role its own reward from the same scoring, where the
    levels separate: ``rouge`` scores the first role's text only, so only the first role gets it; when
    the structure gates fail, a role whose own text passes them (word count, not degenerate, prose, not
    copied; from ``-v3`` on every gate of :mod:`~llm_coop_envs.writing.text_gates`) keeps the structure
    credit of passed gates (0.5 × the structure weight) instead of the pair's. Every
    other level scores the two texts together and is shared. Any reward but the plain ``"levels"`` (a
    function of the user's, a weighted list) is shared whole.
    """

    def __init__(
        self,
        spec: WritingSpec,
        items: tuple[Item, ...],
        config: LevelConfig,
        reward: Any = "levels",
        salience: Salience | None = None,
        grader: WritingGrader | None = None,
        reward_mode: str = "joint",
        language_model: Any = None,
        claims_judge: ClaimsJudge | None = None,
    ) -> None:
        if not items:
            raise ValueError(f"The {spec.name} task needs at least one problem.")
        if reward_mode not in REWARD_MODES:
            raise ValueError(f"reward_mode must be one of {REWARD_MODES}, got {reward_mode!r}.")
        self.reward_mode = reward_mode
        self.spec = spec
        self.agents = spec.agents
        self.items = items
        self.config = config
        self.salience = salience if salience is not None else Salience.from_sources(item.source for item in items)
        """Word weights for grounding: from every row of the data file when built by the env factory."""
        self._profiles: dict[int, SourceProfile] = {}
        self.grader = grader
        """Off (None) by default; when set, the reward has a ``grader`` component."""
        self.reward = resolve_reward(reward, {"levels": self.component_names()})
        if language_model is not None and config.lm is None:
            raise ValueError("language_model= is read by the -v3 rewards only; this config has no language-model levels.")
        self.lm = None if config.lm is None else LanguageModel.shared(language_model or config.lm.model)
        """The scoring model of ``-v3`` (loaded at the first scored step, shared by copies); None before ``-v3``."""
        if config.claims is not None:
            claims.require_extra()
        if claims_judge is not None and config.claims is None:
            raise ValueError("claims_judge= is read by the -v5 rewards only; this config has no claim check.")
        self.claims_judge = claims_judge
        """``-v5``: an outside judge of the claims (off by default: the offline check reads them)."""

    def __len__(self) -> int:
        return len(self.items)

    def task_id(self, index: int) -> str:
        return self.items[index].id

    def prompt(self, index: int, agent: str) -> str:
        return self.spec.prompts[agent](self.items[index], self.config)

    def judgement(self, index: int, score: PairScore, grades: Grades | None, levels_reward: RewardResult) -> Mapping[str, Any]:
        """The one mapping of a scored pair: a reward function's ``context`` and ``infos[agent]["details"]``
        (its keys are listed in :mod:`llm_coop_envs.core.reward_fns`)."""
        item = self.items[index]
        judged = {
            "task_id": item.id, "source": item.source, "title": item.title, "subreddit": item.subreddit,
            "reference": item.reference,
            "levels": {o.name: {"score": round(o.score, 4), "passed": o.passed} for o in score.levels},
            "metrics": score.metrics,
            "level_reward": round(levels_reward.total, 4),
        }
        if self.grader is not None:
            judged["grader"] = _grader_details(grades)
        return types.MappingProxyType(judged)

    def score(self, index: int, replies: Mapping[str, str]) -> PairScore:
        item = self.items[index]
        reference = item.reference if self.spec.uses_reference else None
        if self.config.claims is not None:
            return chain.score_pair_v5(self.pair(index, replies), self.config, self.lm, reference, self.claims_judge)
        if self.lm is not None:
            return score_pair_v3(self.pair(index, replies), self.config, self.lm, reference)
        return score_pair(self.pair(index, replies), self.config, reference)

    def pair(self, index: int, replies: Mapping[str, str]) -> PairTexts:
        item = self.items[index]
        texts = (replies[self.agents[0]], replies[self.agents[1]])
        source = item.source
        if self.lm is not None and item.title:
            # The writers see the title too ("Me [18M] ..."): the model and the fact checks read it as well.
            source = f"{item.title}\n\n{item.source}"
        return PairTexts(self.agents, texts, source, self.spec.source_name, self.profile(index))

    def prefetch(self, items: Sequence[tuple[int, Mapping[str, str]]]) -> None:
        """Score every text of these pairs with the model in one batched pass (the levels then read the cache)."""
        if self.lm is not None:
            asked = chain.requests_if_scored if self.config.claims is not None else requests_if_scored
            self.lm.score([r for index, replies in items for r in asked(self.pair(index, replies), self.config)])

    def profile(self, index: int) -> SourceProfile:
        """The source's weighted content words (built once per problem)."""
        if index not in self._profiles:
            self._profiles[index] = SourceProfile.build(self.items[index].source, self.salience)
        return self._profiles[index]

    def component_names(self) -> tuple[str, ...]:
        """The reward components of this task, in order (``rouge`` only when a reference is scored)."""
        return self.config.level_names() + ("rouge",) * self.spec.uses_reference + ("grader",) * (self.grader is not None)

    def level_reward(self, score: PairScore, grades: Grades | None = None) -> RewardResult:
        weights = self.config.weights
        components = {name: getattr(weights, name) * value for name, value in score.level_scores().items()}
        if self.spec.uses_reference:
            components["rouge"] = weights.rouge * (score.rouge or 0.0)
        if self.grader is not None:
            components["grader"] = weights.grader * (grades.mean if grades is not None else 0.0)
        return RewardResult.from_components(components)

    def grade(self, index: int, replies: Mapping[str, str], score: PairScore) -> Grades | None:
        """The grader's grades; None without a grader or when the structure gates failed (nothing is sent)."""
        if self.grader is None or not score.gates_passed:
            return None
        texts = (replies[self.agents[0]], replies[self.agents[1]])
        return self.grader.grade(self.spec.description or self.spec.name, self.agents, texts, self.items[index].source)

    def max_reward(self) -> float:
        return sum(getattr(self.config.weights, name) for name in self.component_names())

    def evaluate(self, index: int, replies: Mapping[str, str]) -> Evaluation:
        return self.evaluate_many([(index, replies)])[0]

    def evaluate_many(self, items: Sequence[tuple[int, Mapping[str, str]]],
                      executor: Executor | None = None) -> list[Evaluation]:
        """``evaluate`` for many (index, replies) pairs: the levels (and grader calls) one pair at a
        time, on ``executor`` when given; the reward functions in one batch."""
        def score_one(item: tuple[int, Mapping[str, str]]) -> tuple[PairScore, Grades | None]:
            return self._scored(*item)

        self.prefetch(items)
        scored = list(map(score_one, items) if executor is None or len(items) < 2 else executor.map(score_one, items))
        levels = [self.level_reward(score, grades) for score, grades in scored]
        judged = [self.judgement(index, score, grades, level) for (index, _), (score, grades), level in zip(items, scored, levels)]
        rewards = levels
        if not self.reward.is_bundled_only:
            bundled = levels if self.reward.bundled is not None else None
            rewards = self.reward.combine(bundled, [r for _, r in items], judged)
        return [self._evaluation(index, replies, score, grades, level, reward, details)
                for (index, replies), (score, grades), level, reward, details in zip(items, scored, levels, rewards, judged)]

    def _scored(self, index: int, replies: Mapping[str, str]) -> tuple[PairScore, Grades | None]:
        score = self.score(index, replies)
        return score, self.grade(index, replies, score)

    def _evaluation(self, index: int, replies: Mapping[str, str], score: PairScore, grades: Grades | None,
                    levels_reward: RewardResult, reward: RewardResult, details: Mapping[str, Any]) -> Evaluation:
        text = self._feedback(score, levels_reward, grades)
        return Evaluation(reward=reward, solved=score.solved, feedback=dict.fromkeys(self.agents, text), details=details,
                          agent_rewards=self._agent_rewards(index, replies, score, reward))

    def _agent_rewards(self, index: int, replies: Mapping[str, str], score: PairScore,
                       reward: RewardResult) -> dict[str, RewardResult] | None:
        """Each role's own reward (see the class docstring); None under the joint reward."""
        if self.reward_mode == "joint":
            return None
        if not self.reward.is_bundled_only:
            return dict.fromkeys(self.agents, reward)
        own_gates = dict.fromkeys(self.agents, True)
        if not score.gates_passed:
            own_gates = self._own_gates_passed(self.pair(index, replies), score)
        rewards = {}
        for position, agent in enumerate(self.agents):
            components = dict(reward.components)
            if "rouge" in components and position != 0:
                components["rouge"] = 0.0
            if not score.gates_passed and own_gates[agent]:
                components["structure"] = 0.5 * self.config.weights.structure
            rewards[agent] = RewardResult.from_components(components)
        return rewards

    def _own_gates_passed(self, pair: PairTexts, score: PairScore) -> dict[str, bool]:
        """Whether each role's text passes its own structure gates: all of them on the model-read versions
        (``-v3`` on: a looping, cut-off or look-alike text fails its own), the word-level ones before.
        ``-v4``'s gate credit has already named each text's failed gates in the score's metrics."""
        if self.config.lm is None:
            return gates_passed_by_role(pair, self.config)
        failed = score.metrics.get("gates_failed")
        if failed is None:
            failed = {role: [n for n, ok in passed.items() if not ok] for role, passed in text_gates(pair, self.config).items()}
        return {role: not names for role, names in failed.items()}

    def _feedback(self, score: PairScore, reward: RewardResult, grades: Grades | None = None) -> str:
        lines = [f"Level reward {reward.total:.2f} of {self.max_reward():.2f}."]
        lines += [outcome.message for outcome in score.levels]
        last = score.levels[-1]
        if not last.passed:
            lines.append(f"Scoring stopped at the {last.name} level; later levels scored 0.")
        if self.spec.uses_reference and score.rouge is not None:
            lines.append(f"ROUGE (mean F1) of the {self.agents[0]} text against the author's TL;DR: {score.rouge:.2f}.")
        if grades is not None and grades.error:
            lines.append(f"Grader: no grades ({grades.error}); the grader component is 0.")
        elif grades is not None:
            lines.append("Grader grades (0-1): " + ", ".join(f"{name} {value:.2f}" for name, value in grades.scores.items()) + ".")
        return "\n".join(lines)


def _grader_details(grades: Grades | None) -> dict[str, Any]:
    if grades is None:
        return {"scores": {}, "error": None, "cached": False, "sent": False}
    return {"scores": dict(grades.scores), "error": grades.error, "cached": grades.cached, "sent": True}
