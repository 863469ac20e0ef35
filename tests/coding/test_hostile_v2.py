"""The attack classes of the third coding-reward revision (rules ``v2``), on every current coding id.

Each trick earns no more than the same reply without it; the controls (the reply without the
trick, an honest correct reply, real cooperation, and the next honest episode) score as before; no
observation carries hidden-test data or text the partner's code chose. The superseded ids (``v1``
rules) are run beside them for the record: the table of the docs page comes from these replies.
"""

from __future__ import annotations

import ast
import functools

import pytest

from llm_coop_envs.sandbox import SandboxConfig
from tests.coding.hostile_v2 import (call_reprs, CURRENT_IDS, STATE_MARKS, SUPERSEDED, case, env_for, hidden_variants,
                                     state_tricks, step, tricks)

CLASSES = list(tricks(case("coop_basics-v2")))
SECRETS = ("zq_helper_secret", "zq_main_secret", "ValueError", "KeyError", "ZeroDivisionError", "idden")
"""Identifiers the agents chose, exception kinds their code raised, and any word about hidden tests."""
FAST = SandboxConfig(timeout_s=3.0, test_timeout_s=0.5)


@functools.lru_cache(maxsize=None)
def _case(env_id):
    return case(env_id)


@functools.lru_cache(maxsize=None)
def _env(env_id, turns=1, reward_mode="joint"):
    c = _case(env_id)
    return env_for(env_id, c, num_turns=turns, reward_mode=reward_mode, sandbox=FAST)


@pytest.mark.parametrize("env_id", CURRENT_IDS)
def test_controls_score_as_before(env_id):
    c = _case(env_id)
    env = _env(env_id)
    [(real, info, _)] = step(env, c, c.helper, c.entry_def(c.main.strip("\n").replace("    ", "", 1)))
    [(solo, _, _)] = step(env, c, c.helper, c.solo())
    [(alone, _, _)] = step(env, c, "no code, sorry", c.solo())
    [(wrong, _, _)] = step(env, c, c.helper, c.entry_def("return None"))
    assert real == pytest.approx(4.0), info["details"]["helper_dependence"]
    assert info["details"]["helper_dependence"]["needed"]
    assert solo == pytest.approx(2.5) and alone == pytest.approx(2.1)
    assert wrong < alone < solo < real


@pytest.mark.parametrize("turns", [1, 2])
@pytest.mark.parametrize("env_id", CURRENT_IDS)
@pytest.mark.parametrize("name", CLASSES)
def test_a_trick_earns_no_more_than_the_reply_without_it(name, env_id, turns):
    c = _case(env_id)
    env = _env(env_id, turns)
    (trick, baseline) = tricks(c)[name]
    with_trick = step(env, c, *trick, turns=turns)
    without = step(env, c, *baseline, turns=turns)
    for (r_trick, info, _), (r_plain, _, _) in zip(with_trick, without):
        assert r_trick <= r_plain + 1e-9, (name, info["reward_components"], info["details"]["helper_dependence"])
    # the next honest episode scores as before
    honest = c.entry_def(c.main.strip("\n").replace("    ", "", 1))
    assert step(env, c, c.helper, honest)[0][0] == pytest.approx(4.0)


@pytest.mark.parametrize("env_id", CURRENT_IDS)
def test_a_dead_store_earns_main_nothing_under_per_agent_rewards(env_id):
    c = _case(env_id)
    env = _env(env_id, 1, "per_agent")
    (trick, baseline) = tricks(c)["dead store"]
    [(own_trick, info, _)] = step(env, c, *trick)  # under per_agent, main's reward is its own
    [(own_plain, _, _)] = step(env, c, *baseline)
    assert own_trick <= own_plain + 1e-9, info["agent_reward_components"]


@pytest.mark.parametrize("env_id", CURRENT_IDS)
def test_no_observation_carries_hidden_test_data_or_partner_chosen_text(env_id):
    """Replies that behave alike on the public examples and differ on hidden calls (exception kinds,
    how many hidden tests pass, identifiers) get the same feedback, turn after turn."""
    c = _case(env_id)
    env = _env(env_id, 3)
    variants = hidden_variants(c, call_reprs(env, c), call_reprs(env, c, hidden=True))
    seen = {}
    for name, (helper, main) in variants.items():
        env.reset(options={"task_id": c.task_id})
        texts = []
        for _ in range(2):
            observations, _, terminations, _, infos = env.step({"helper": helper, "main": main})
            assert not any(terminations.values()), name
            texts.append(tuple(infos[a]["feedback"] for a in ("helper", "main")))
            for agent, partner_secret in (("helper", "zq_main_secret"), ("main", "zq_helper_secret")):
                assert partner_secret not in observations[agent], (name, agent)
                for secret in SECRETS:
                    assert secret not in infos[agent]["feedback"], (name, agent, secret)
        seen[name] = texts
    assert len(set(map(tuple, seen.values()))) == 1, seen


@pytest.mark.parametrize("name", [n for n in CLASSES if n != "thin wrapper: aliases"])
def test_the_superseded_rules_pay_the_trick(name):
    """The suite attacks something real: under ``v1`` each trick (but the alias spelling, which the
    v1 reading of the code already refuses) earns more than the reply without it."""
    c = _case("coop_basics-v2")
    env = env_for("coop_basics-v1", c, sandbox=FAST)
    trick, baseline = tricks(c)[name]
    assert step(env, c, *trick)[0][0] > step(env, c, *baseline)[0][0]


@pytest.mark.parametrize("env_id", CURRENT_IDS)
def test_a_table_of_the_prompt_examples_earns_less_than_solving(env_id):
    """Every scored problem has a hidden test that is not a prompt example, so a lookup table of the
    examples (the public tests) fails one, on every id."""
    c = _case(env_id)
    env = _env(env_id)
    table = {}
    env.reset(options={"task_id": c.task_id})
    for test in env.task.problems[env._episode.index].public_tests:
        compare = next(n for n in ast.walk(ast.parse(test.label)) if isinstance(n, ast.Compare))
        call = compare.left
        table[repr(tuple(ast.literal_eval(a) for a in call.args))] = ast.literal_eval(compare.comparators[0])
    main = f"_TABLE = {table!r}\n\n" + c.entry_def(f"return _TABLE.get(repr(({c.params},)))")
    [(looked_up, info, _)] = step(env, c, c.helper, main)
    [(solved, _, _)] = step(env, c, c.helper, c.solo())
    assert table and info["details"]["passed"] < info["details"]["total"]
    assert looked_up < solved


@pytest.mark.parametrize("backend", ["bwrap", "subprocess"])
@pytest.mark.parametrize("env_id", ["coop_basics-v2", "humaneval-v2"])
@pytest.mark.parametrize("name", list(STATE_MARKS))
def test_state_kept_from_one_test_to_the_next_earns_nothing(name, env_id, backend):
    """Each hidden test runs in a child of its own, forked before the program ran: a main that is
    right only once an earlier test left a mark (a counted global, a file, a replaced builtin, a
    process left running) finds none, and scores as the same reply without the trick; under the
    superseded rules (one process for every test) the same trick passes every test but the first."""
    c = _case(env_id)
    sandbox = SandboxConfig(timeout_s=3.0, test_timeout_s=0.5, backend=backend)
    trick, baseline = state_tricks(c)[name]
    rewards = {}
    for version in (SUPERSEDED[env_id], env_id):
        env = env_for(version, c, sandbox=sandbox)
        [(with_trick, info, _)] = step(env, c, *trick)
        [(without, _, _)] = step(env, c, *baseline)
        rewards[version] = (with_trick, without, info["details"]["passed"], info["details"]["total"])
    with_trick, without, passed, _ = rewards[env_id]
    assert with_trick <= without + 1e-9 and passed == 0, rewards
    old_trick, old_without, old_passed, old_total = rewards[SUPERSEDED[env_id]]
    assert old_trick > old_without and old_passed == old_total - 1, rewards
