"""CodingTask: the helper/main code-collaboration task over a list of HumanEval-style problems."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from llm_coop_envs.coding.agent_rewards import check_reward_mode, own_share, partner_reference
from llm_coop_envs.coding.cooperation import analyse_helper_use
from llm_coop_envs.coding.feedback import agent_feedback
from llm_coop_envs.coding.parsing import parse_reply
from llm_coop_envs.coding.problems import CodingProblem
from llm_coop_envs.coding.program import build_program
from llm_coop_envs.coding.prompts import helper_prompt, main_prompt, solo_prompt
from llm_coop_envs.coding.reward import Verdict, resolve_reward
from llm_coop_envs.core.reward import RewardResult
from llm_coop_envs.core.task import Evaluation
from llm_coop_envs.sandbox import ExecutionResult, SandboxConfig, run_tests, run_tests_batch

ROLES = ("helper", "main")
TEAMS = {"pair": ROLES, "single": ("main",)}


class CodingTask:
    """Implements the :class:`~llm_coop_envs.core.task.Task` protocol. Immutable after init.

    ``team="pair"`` is the helper/main collaboration; ``team="single"`` has one agent, ``main``,
    writing the whole solution (the single-model baseline, and the env for single-agent GRPO).
    ``reward_mode="per_agent"`` adds each agent's own reward (:mod:`llm_coop_envs.coding.agent_rewards`).
    """

    def __init__(
        self,
        rows: Sequence[Mapping[str, Any]],
        *,
        reward: str | Callable[..., Any] = "levels",
        sandbox: SandboxConfig | None = None,
        protocol: str = "parallel",
        team: str = "pair",
        reward_mode: str = "joint",
    ) -> None:
        if team not in TEAMS:
            raise ValueError(f"team must be one of {tuple(TEAMS)}, got {team!r}.")
        if sandbox is not None and not isinstance(sandbox, SandboxConfig):
            raise TypeError(f"sandbox must be a SandboxConfig or None, got {type(sandbox).__name__}.")
        if not rows:
            raise ValueError("A coding task needs at least one problem.")
        self.problems = tuple(CodingProblem.from_row(row, i) for i, row in enumerate(rows))
        self.agents = TEAMS[team]
        self.team = team
        self.reward = resolve_reward(reward, team)
        self.sandbox = sandbox
        self.protocol = protocol
        self.reward_mode = check_reward_mode(reward_mode)

    def __len__(self) -> int:
        return len(self.problems)

    def task_id(self, index: int) -> str:
        return self.problems[index].task_id

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
        helper_reply, main_reply = replies.get("helper", ""), replies.get("main", "")
        pairs, owners = [(helper_reply, main_reply)], []
        if self.reward_mode == "per_agent" and self.team == "pair":
            row = self.problems[index].row
            for agent in self.agents:
                reference = partner_reference(row, agent)
                if reference is not None:
                    pairs.append((helper_reply, reference) if agent == "helper" else (reference, main_reply))
                    owners.append(agent)
        verdict, *paired = self.judge_pairs(index, pairs)
        reward = self.reward(verdict)
        return Evaluation(
            reward=reward,
            solved=verdict.result is not None and verdict.result.all_passed and verdict.program.main_defined,
            feedback=agent_feedback(verdict),
            details=_details(verdict),
            agent_rewards=self._agent_rewards(reward, dict(zip(owners, paired))),
        )

    def _agent_rewards(self, joint: RewardResult, paired: Mapping[str, Verdict]) -> dict[str, RewardResult] | None:
        """Per-agent rewards (reference pairing where judged, structure credit otherwise); None when joint."""
        if self.reward_mode == "joint":
            return None
        if self.team == "single":
            return {agent: joint for agent in self.agents}
        return {agent: own_share(self.reward(paired[agent]) if agent in paired else joint, agent)
                for agent in self.agents}

    def judge(self, index: int, helper_reply: str, main_reply: str) -> Verdict:
        """Parse, assemble, check and run one joint reply (everything but the reward)."""
        return self.judge_pairs(index, [(helper_reply, main_reply)])[0]

    def judge_pairs(self, index: int, pairs: list[tuple[str, str]]) -> list[Verdict]:
        """:meth:`judge` for several (helper reply, main reply) pairs of one problem, in one sandbox batch."""
        problem = self.problems[index]
        parsed = [(parse_reply(h), parse_reply(m)) for h, m in pairs]
        programs = [build_program(problem, helper, main) for helper, main in parsed]
        runnable = [i for i, p in enumerate(programs) if p.main_defined and p.syntax is None]
        tests = [t.source for t in problem.tests]
        # The prompt's own code (imports, helper functions) is trusted: the judge runs the
        # tests with it, so a program cannot redefine what the tests call.
        jobs = [(programs[i].source, tests, problem.entry_point, problem.context) for i in runnable]
        if len(jobs) == 1:
            ran = [run_tests(*jobs[0][:3], self.sandbox, context=problem.context)]
        else:
            ran = run_tests_batch(jobs, self.sandbox, workers=len(jobs)) if jobs else []
        results: dict[int, ExecutionResult] = dict(zip(runnable, ran))
        verdicts = []
        for i, ((helper_reply, main_reply), (helper, main), program) in enumerate(zip(pairs, parsed, programs)):
            use = analyse_helper_use(program.main_code, problem.entry_point, program.helper_functions)
            verdicts.append(Verdict(problem, helper_reply, main_reply, program, results.get(i), use, helper, main))
        return verdicts


def _details(verdict: Verdict) -> dict[str, Any]:
    program, result = verdict.program, verdict.result
    details: dict[str, Any] = {
        "parse": {"helper": verdict.helper_parse.summary(), "main": verdict.main_parse.summary()},
        "program": program.source,
        "helper_functions": list(program.helper_functions),
        "main_defined": program.main_defined,
        "dropped_from_helper": list(program.dropped_from_helper),
        "dropped_from_main": list(program.dropped_from_main),
        "syntax_error": None,
        "passed": verdict.passed,
        "total": len(verdict.problem.tests),
        "tests": [],
        "sandbox": None,
        "helper_use": {
            "calls_helper": verdict.helper_use.calls_helper,
            "thin_wrapper": verdict.helper_use.thin_wrapper,
            "ignores_return": verdict.helper_use.ignores_return,
            "used": list(verdict.helper_use.used),
        },
    }
    if program.syntax is not None:
        issue = program.syntax
        details["syntax_error"] = {
            "message": issue.message, "owner": issue.owner, "line": issue.line, "col": issue.col,
            "program_line": issue.program_line,
        }
    if result is not None:
        details["sandbox"] = _sandbox_summary(result)
        details["tests"] = [
            {"test": t.label, "status": o.status, "error_type": o.error_type, "message": o.message,
             "fallback": o.fallback}
            for t, o in zip(verdict.problem.tests, result.tests)
        ]
    return details


def _sandbox_summary(result: ExecutionResult) -> dict[str, Any]:
    return {
        "status": result.status,
        "error_type": result.error_type,
        "error_message": result.error_message,
        "duration_s": round(result.duration_s, 4),
        "backend": result.backend,
        "stdout": result.stdout[:2000],
        "stderr": result.stderr[:2000],
    }
