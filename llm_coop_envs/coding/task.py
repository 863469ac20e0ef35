"""CodingTask: the helper/main code-collaboration task over a list of HumanEval-style problems."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

from llm_coop_envs.coding.agent_rewards import check_reward_mode, own_share, partner_reference
from llm_coop_envs.coding.cooperation import analyse_helper_use
from llm_coop_envs.coding.dependence import (HelperDependence, decide, dependence_jobs, joint_job, reused,
                                             scaled_config, variant_requests)
from llm_coop_envs.coding.feedback import agent_feedback
from llm_coop_envs.coding.judgement import judgement
from llm_coop_envs.coding.lazy import LazyProblems
from llm_coop_envs.coding.pair_prompts import uses_pair_prompts
from llm_coop_envs.coding.parsing import ParsedReply, parse_reply
from llm_coop_envs.coding.problems import CodingProblem
from llm_coop_envs.coding.program import Program, build_program
from llm_coop_envs.coding.prompts import helper_prompt, main_prompt, solo_prompt
from llm_coop_envs.coding.reward import Verdict, resolve_reward
from llm_coop_envs.coding.rules import ScoringRules, scoring_rules
from llm_coop_envs.core.reward import RewardResult
from llm_coop_envs.core.task import Evaluation
from llm_coop_envs.sandbox import ExecutionResult, SandboxConfig, run_tests, run_tests_batch
from llm_coop_envs.sandbox.api import cores
from llm_coop_envs.sandbox.variants import run_variants_batch

ROLES = ("helper", "main")
SPLIT_MAX = 2
"""At most this many sandbox requests for one step's counterfactual runs (each costs a confined run)."""
TEAMS = {"pair": ROLES, "single": ("main",)}


class CodingTask:
    """Implements the :class:`~llm_coop_envs.core.task.Task` protocol. Immutable after init.

    ``team="pair"`` is the helper/main collaboration; ``team="single"`` has one agent, ``main``,
    writing the whole solution (the single-model baseline, and the env for single-agent GRPO).
    ``reward_mode="per_agent"`` adds each agent's own reward (:mod:`llm_coop_envs.coding.agent_rewards`).
    ``counterfactual=False`` (``v2`` rules) skips the counterfactual runs, and with them all
    cooperation credit: main's need of ``aux`` is then unknown, and unknown is not paid (``uses_helper``
    and ``beyond_wrapper`` stay 0, ``details["helper_dependence"]["checked"]`` is False).
    ``rules`` are the env version's scoring rules (:mod:`llm_coop_envs.coding.rules`); ``dataset`` names
    the dataset for its public-test convention; ``leaky_feedback=True`` quotes failing scoring asserts
    (a reproduction option, see :mod:`llm_coop_envs.coding.feedback`). ``rows`` may be any sequence,
    lazy ones included: a problem is prepared when first used.
    """

    def __init__(
        self,
        rows: Sequence[Mapping[str, Any]],
        *,
        reward: Any = "levels",
        sandbox: SandboxConfig | None = None,
        protocol: str = "parallel",
        team: str = "pair",
        reward_mode: str = "joint",
        rules: str | ScoringRules = "v0",
        dataset: str = "",
        leaky_feedback: bool = False,
        counterfactual: bool = True,
    ) -> None:
        if team not in TEAMS:
            raise ValueError(f"team must be one of {tuple(TEAMS)}, got {team!r}.")
        if sandbox is not None and not isinstance(sandbox, SandboxConfig):
            raise TypeError(f"sandbox must be a SandboxConfig or None, got {type(sandbox).__name__}.")
        if not rows:
            raise ValueError("A coding task needs at least one problem.")
        self.rules = scoring_rules(rules)
        if not isinstance(leaky_feedback, bool):
            raise TypeError(f"leaky_feedback must be True or False, got {leaky_feedback!r}.")
        if not isinstance(counterfactual, bool):
            raise TypeError(f"counterfactual must be True or False, got {counterfactual!r}.")
        if not counterfactual and not self.rules.counterfactual:
            raise ValueError(f"counterfactual=False: the {self.rules.name} rules make no counterfactual runs.")
        self.counterfactual = counterfactual
        self.feedback_mode = ("leaky" if leaky_feedback or not self.rules.hidden_tests
                              else "silent" if self.rules.silent_hidden else "public")
        self.problems = LazyProblems(rows, lambda row, i: CodingProblem.from_row(row, i, self.rules, dataset))
        self.agents = TEAMS[team]
        self.team = team
        self.reward = resolve_reward(reward, team)
        if self.rules.test_per_child:  # a program's state cannot carry from one test to the next
            sandbox = dataclasses.replace(sandbox or SandboxConfig(), isolate_tests=True)
        self.sandbox = sandbox
        self.protocol = protocol
        self.reward_mode = check_reward_mode(reward_mode)

    def __len__(self) -> int:
        return len(self.problems)

    def task_id(self, index: int) -> str:
        return self.problems[index].task_id

    def index_of(self, task_id: str) -> int | None:
        """The index of ``task_id`` without scanning every problem, when the rows can say it; else None."""
        return self.problems.index_of(task_id)

    def prompt(self, index: int, agent: str) -> str:
        problem = self.problems[index]
        if agent not in self.agents:
            raise ValueError(f"Unknown agent {agent!r}; this team's roles are {self.agents}.")
        if self.team == "single":
            return solo_prompt(problem)
        if agent == "helper":
            return helper_prompt(problem, self.protocol)
        return main_prompt(problem, self.protocol)

    def single_agent_prompt(self, index: int) -> str:
        """The prompt for one model writing the whole solution (used by single-model baselines)."""
        return solo_prompt(self.problems[index])

    def evaluate(self, index: int, replies: Mapping[str, str]) -> Evaluation:
        return self.evaluate_many([(index, replies)])[0]

    # The env says which replies end their episode's last turn (core/env.py): under rules with a
    # separate public run, that run only feeds back to a next turn, so none is made for them.
    reads_last_turn = True

    def evaluate_many(self, items: Sequence[tuple[int, Mapping[str, str]]],
                      executor: Executor | None = None,
                      last_turn: Sequence[bool] | None = None) -> list[Evaluation]:
        """``evaluate`` for many (index, replies) pairs at once: every program that needs the
        sandbox goes in one ``run_tests_batch`` call, which keeps the warm interpreters busy back
        to back. Each program still runs on its own, so the results equal one ``evaluate`` each.
        ``executor`` is not needed (the sandbox batch already runs the programs side by side).
        ``last_turn[i]``: item i ends its episode, so its feedback reaches no agent (default: no)."""
        plans = [self._pairs(index, replies) for index, replies in items]
        last = list(last_turn) if last_turn is not None else [False] * len(items)
        drafts = [[self._draft(index, h, m, public=not end) for h, m in pairs]
                  for (index, _), (pairs, _), end in zip(items, plans, last)]
        results = iter(self._run([job for ds in drafts for d in ds for job in d.jobs]))
        verdicts = [[d.verdict(*[next(results) for _ in d.jobs]) for d in ds] for ds in drafts]
        verdicts = self._with_dependence(verdicts, [d for ds in drafts for d in ds])
        flat = [v for vs in verdicts for v in vs]
        judged = [judgement(v) for v in flat]
        rewards = iter(zip(judged, self.reward.score_many(flat, judged)))  # one batch, paired runs too
        evaluations = []
        for item_verdicts, (_, owners) in zip(verdicts, plans):
            (details, reward), *paired = [next(rewards) for _ in item_verdicts]
            own = {owner: r for owner, (_, r) in zip(owners, paired)}
            evaluations.append(self._evaluation(item_verdicts[0], details, reward, own))
        return evaluations

    def _pairs(self, index: int, replies: Mapping[str, str]) -> tuple[list[tuple[str, str]], list[str]]:
        """The (helper, main) replies to run: the joint reply, then with per-agent rewards each
        agent's own reply beside its partner's reference (where the problem has one)."""
        helper_reply, main_reply = replies.get("helper", ""), replies.get("main", "")
        pairs, owners = [(helper_reply, main_reply)], []
        if self.reward_mode == "per_agent" and self.team == "pair":
            row = self.problems[index].row
            for agent in self.agents:
                reference = partner_reference(row, agent)
                if reference is not None:
                    pairs.append((helper_reply, reference) if agent == "helper" else (reference, main_reply))
                    owners.append(agent)
        return pairs, owners

    def _run(self, jobs: list[tuple[str, list[str], str, str]],
             config: SandboxConfig | None = None) -> list[ExecutionResult]:
        config = config or self.sandbox
        if len(jobs) == 1:
            program, tests, entry_point, context = jobs[0]
            return [run_tests(program, tests, entry_point, config, context=context)]
        return run_tests_batch(jobs, config) if jobs else []

    def _with_dependence(self, verdicts: list[list[Verdict]], drafts: list[_Draft]) -> list[list[Verdict]]:
        """Under counterfactual rules, each verdict with its :class:`HelperDependence`: the stand-in,
        pairing and aux-alone runs of every verdict that needs them, one sandbox request of variants
        per verdict, batched by their scaled limits."""
        if not self.rules.counterfactual:
            return verdicts
        flat = [v for vs in verdicts for v in vs]
        plans = {i: dependence_jobs(v.problem, v.program, d.helper, d.main)
                 for i, (v, d) in enumerate(zip(flat, drafts))
                 if v.needs_dependence_check and self.counterfactual}
        outcomes: dict[int, dict[str, ExecutionResult]] = {
            i: reused(jobs, joint_job(flat[i].problem, flat[i].program), flat[i].result) for i, jobs in plans.items()}
        # A step or two alone would leave cores idle behind one request each: split them.
        parts = min(SPLIT_MAX, max(1, cores() // max(1, len(plans))))
        groups: dict[SandboxConfig, list[tuple[int, list[str], Any]]] = {}
        for i, jobs in plans.items():
            config = scaled_config(self.sandbox or SandboxConfig(), flat[i].result.duration_s)
            for request in variant_requests(jobs, outcomes[i], parts):
                groups.setdefault(config, []).append((i, *request))
        for config, entries in groups.items():
            for (i, names, _), results in zip(entries, run_variants_batch([r for _, _, r in entries], config)):
                outcomes[i].update(zip(names, results))
        done = [dataclasses.replace(v, dependence=decide(plans[i], outcomes[i]) if i in plans else HelperDependence())
                for i, v in enumerate(flat)]
        it = iter(done)
        return [[next(it) for _ in vs] for vs in verdicts]

    def _evaluation(self, verdict: Verdict, details: Mapping[str, Any], reward: RewardResult,
                    paired: Mapping[str, RewardResult]) -> Evaluation:
        return Evaluation(
            reward=reward,
            solved=verdict.all_passed and verdict.program.main_defined,
            feedback=agent_feedback(verdict, self.feedback_mode),
            details=details,
            agent_rewards=self._agent_rewards(reward, paired),
            private_reward=self.rules.silent_hidden,  # its tests component is the hidden pass share
        )

    def _agent_rewards(self, joint: RewardResult, paired: Mapping[str, RewardResult]) -> dict[str, RewardResult] | None:
        """Per-agent rewards (reference pairing where judged, structure credit otherwise); None when joint."""
        if self.reward_mode == "joint":
            return None
        if self.team == "single":
            return {agent: joint for agent in self.agents}
        return {agent: own_share(paired.get(agent, joint), agent) for agent in self.agents}

    def verdict(self, index: int, helper_reply: str, main_reply: str) -> Verdict:
        """Parse, assemble, check and run one joint reply (everything but the reward)."""
        draft = self._draft(index, helper_reply, main_reply)
        verdict = draft.verdict(*self._run(list(draft.jobs)))
        return self._with_dependence([[verdict]], [draft])[0][0]

    def _draft(self, index: int, helper_reply: str, main_reply: str, public: bool = True) -> _Draft:
        """Everything before the sandbox run: parsing, the assembled program, its sandbox jobs
        (``public``: also the public tests' own run, where the rules make one)."""
        problem = self.problems[index]
        one_block = uses_pair_prompts(problem)  # its prompts ask for one block: later ones are not code
        helper, main = parse_reply(helper_reply, one_block), parse_reply(main_reply, one_block)
        program = build_program(problem, helper, main, aux_only=self.rules.counterfactual)
        jobs: tuple = ()
        if program.main_defined and program.syntax is None:
            # The prompt's own code (imports, helper functions) is trusted: the judge runs the
            # tests with it, so a program cannot redefine what the tests call.
            if self.rules.silent_hidden:  # public tests in a process that never ran a hidden test
                runs = [problem.tests] + ([problem.public_tests] if problem.public_tests and public else [])
            else:
                runs = [problem.tests_to_run]
            jobs = tuple((program.source, [t.source for t in tests], problem.entry_point, problem.context)
                         for tests in runs)
        return _Draft(problem, helper_reply, main_reply, program, helper, main, jobs, self.rules)


@dataclass(frozen=True)
class _Draft:
    """A joint reply parsed and assembled, waiting for its sandbox results (``jobs`` is empty when
    nothing runs: main is missing or the program does not parse)."""

    problem: CodingProblem
    helper_reply: str
    main_reply: str
    program: Program
    helper: ParsedReply
    main: ParsedReply
    jobs: tuple[tuple[str, list[str], str, str], ...]
    """The scoring run, then under ``v2`` rules the public tests' own run; empty when nothing runs."""
    rules: ScoringRules

    def verdict(self, result: ExecutionResult | None = None, public_result: ExecutionResult | None = None) -> Verdict:
        use = analyse_helper_use(self.program.main_code, self.problem.entry_point,
                                 self.program.helper_functions)
        return Verdict(self.problem, self.helper_reply, self.main_reply, self.program, result, use,
                       self.helper, self.main, self.rules, public_result=public_result)
