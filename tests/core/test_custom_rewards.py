"""The one reward-function protocol (llm_coop_envs.core.reward_fns) through real coding and writing envs:
weighted lists, a function alone, batched functions through step_many, component names, bad returns,
and the one mapping that is both a reward function's context and infos[agent]["details"]."""

from __future__ import annotations

import copy
import math
import re

import pytest

import llm_coop_envs
from llm_coop_envs import batched_reward, step_many
from llm_coop_envs.coding.coop_basics import suite_rows
from llm_coop_envs.core import reward_fns

ROW = suite_rows()[0]
HONEST = {"helper": ROW["reference_helper"], "main": ROW["reference_main"]}
LEVELS = ("helper_defined", "main_defined", "syntax", "tests", "uses_helper", "beyond_wrapper", "ignored_return")


def documented_keys(family: str) -> set[str]:
    """The context keys the module docstring lists for ``family``."""
    section = reward_fns.__doc__.split(f"### {family.capitalize()} envs")[1].split("\n\n")[1]
    return {key for line in section.splitlines()[2:] for key in re.findall(r"``(\w+)``", line.split("|")[1])}


def coding_step(reward, replies=HONEST, **kwargs):
    env = llm_coop_envs.make("coop_basics-v1", split="all", reward=reward, **kwargs)
    env.reset(options={"task_id": ROW["task_id"]})
    _, rewards, _, _, infos = env.step(replies)
    return rewards, infos


def main_length(replies, context):
    return {"chars": len(replies["main"]) / 100, "calls": float(context["helper_use"]["calls_helper"])}


def test_a_weighted_list_sums_the_bundled_reward_and_named_function_parts():
    seen = {}

    def passed(replies, context):
        seen.update(replies=dict(replies), context=dict(context))
        return context["passed"] / context["total"]

    rewards, infos = coding_step([("levels", 2.0), (passed, 0.5), main_length])
    parts = main_length(HONEST, {"helper_use": {"calls_helper": True}})
    expected = {name: 2.0 * value for name, value in coding_step("levels")[1]["main"]["reward_components"].items()}
    expected.update({"passed": 0.5, "main_length/chars": parts["chars"], "main_length/calls": 1.0})
    assert infos["main"]["reward_components"] == pytest.approx(expected)
    assert rewards["main"] == pytest.approx(2.0 * 4.0 + 0.5 + parts["chars"] + 1.0)
    assert seen["replies"] == HONEST and seen["context"]["task_id"] == ROW["task_id"]
    assert set(seen["context"]) == documented_keys("coding")
    assert seen["context"] == infos["main"]["details"]  # one mapping: the context is the details


def test_a_function_alone_replaces_the_bundled_reward_as_before():
    rewards, infos = coding_step(lambda replies, context: 1.5)
    assert rewards == {"helper": 1.5, "main": 1.5} and infos["main"]["reward_components"] == {"custom": 1.5}
    _, infos = coding_step(main_length)
    assert set(infos["main"]["reward_components"]) == {"chars", "calls"}
    assert infos["main"]["solved"]  # solved never depends on the reward


def test_a_list_without_a_bundled_name_scores_only_the_functions():
    rewards, infos = coding_step([(main_length, 3.0)])
    assert set(infos["main"]["reward_components"]) == {"main_length/chars", "main_length/calls"}
    assert rewards["main"] == pytest.approx(3.0 * sum(main_length(HONEST, {"helper_use": {"calls_helper": True}}).values()))


def test_a_batched_function_is_called_once_per_step_many_with_every_sample():
    calls = []

    @batched_reward
    def lengths(replies_list, contexts_list):
        calls.append(len(replies_list))
        return [len(r["main"]) / 100 for r in replies_list]

    env = llm_coop_envs.make("coop_basics-v1", split="all", reward=["levels", (lengths, 0.5)])
    env.reset(options={"task_id": ROW["task_id"]})
    mains = [HONEST["main"], HONEST["main"] + "\n# a comment\n", "no code", ""]
    results = step_many([copy.deepcopy(env) for _ in mains], [{"helper": HONEST["helper"], "main": m} for m in mains])
    assert calls == [len(mains)]
    single = copy.deepcopy(env)
    _, rewards, _, _, infos = single.step({"helper": HONEST["helper"], "main": mains[1]})
    assert calls == [len(mains), 1]
    assert results[1][1] == rewards and results[1][4]["main"]["reward_components"] == infos["main"]["reward_components"]
    assert [r[4]["main"]["reward_components"]["lengths"] for r in results] == [0.5 * len(m) / 100 for m in mains]


def test_per_agent_rewards_score_the_paired_programs_in_the_same_batch():
    calls = []

    @batched_reward
    def count(replies_list, contexts_list):
        calls.append(len(replies_list))
        return [1.0] * len(replies_list)

    rewards, infos = coding_step(["levels", count], reward_mode="per_agent")
    assert calls == [3]  # the joint program and each agent's reference pairing
    assert infos["helper"]["agent_reward_components"]["count"] == 1.0 and rewards["helper"] == pytest.approx(3.4 + 1.0)


@pytest.mark.parametrize("reward,error,message", [
    (["levels", "execution"], ValueError, "at most one"),
    (["levels", lambda r, c: 1.0, lambda r, c: 2.0], ValueError, "'<lambda>'"),
    (["levels", "tests"], ValueError, "reward='tests'"),
    ([], TypeError, "non-empty list"),
    (("levels",), TypeError, "non-empty list"),
    (["levels", (main_length, "high")], TypeError, "weight of 'main_length'"),
    (["levels", 3], TypeError, "list element"),
])
def test_bad_reward_arguments_say_how_to_fix_them(reward, error, message):
    with pytest.raises(error, match=re.escape(message)):
        llm_coop_envs.make("coop_basics-v1", reward=reward)


def test_a_function_named_like_a_bundled_component_is_an_error():
    def tests(replies, context):
        return 1.0

    with pytest.raises(ValueError, match="named 'tests'"):
        llm_coop_envs.make("coop_basics-v1", reward=["levels", tests])
    llm_coop_envs.make("coop_basics-v1", reward=[(tests, 1.0)])  # no bundled reward: no clash


def test_parts_that_collide_when_named_are_an_error():
    def first(replies, context):
        return {"x": 1.0}

    def second(replies, context):
        return 1.0

    second.__name__ = "first/x"
    with pytest.raises(ValueError, match=re.escape("['first/x'] are named twice")):
        coding_step([first, second])


def bad(value):
    def returns_bad(replies, context):
        return value
    return returns_bad


@batched_reward
def wrong_length(replies_list, contexts_list):
    return [1.0] * (len(replies_list) + 1)


@batched_reward
def not_a_list(replies_list, contexts_list):
    return 1.0


def raises(replies, context):
    return 1 / 0


@pytest.mark.parametrize("function,error,message", [
    (bad(True), TypeError, "'returns_bad' returned True"),
    (bad("high"), TypeError, "'returns_bad' returned 'high'"),
    (bad(None), TypeError, "'returns_bad' returned None"),
    (bad(math.nan), ValueError, "'returns_bad' returned nan"),
    (bad(math.inf), ValueError, "finite"),
    (bad({"a": math.inf}), ValueError, "(part 'a')"),
    (bad({1: 1.0}), TypeError, "strings"),
    (wrong_length, ValueError, "'wrong_length' returned 2 values for 1 samples"),
    (not_a_list, TypeError, "'not_a_list' returned 1.0"),
    (raises, RuntimeError, f"'raises' raised ZeroDivisionError on task '{ROW['task_id']}'"),
])
def test_bad_returns_raise_an_error_naming_the_function(function, error, message):
    for reward in (function, ["levels", function]):
        with pytest.raises(error, match=re.escape(message)):
            coding_step(reward)


@pytest.mark.parametrize("old", [lambda result, **kwargs: 1.0, lambda *, result: 1.0, lambda **kwargs: 1.0])
def test_the_removed_keyword_form_is_an_error_that_names_the_protocol(old):
    with pytest.raises(TypeError, match=re.escape("write `def <lambda>(replies, context):`")):
        llm_coop_envs.make("coop_basics-v1", reward=["levels", old])


def test_the_protocol_takes_any_two_positional_arguments():
    def keeps_all(replies, context, *rest, result=1.0):
        return result

    for new in (lambda replies, context: 1.0, lambda r, c: 1.0, lambda *args: 1.0, keeps_all, max):
        assert reward_fns.takes_replies_and_context(new)
        llm_coop_envs.make("coop_basics-v1", reward=["levels", new])


# ----------------------------------------------------------------- writing


@pytest.fixture(scope="module")
def tldr_envs(data_dir):
    def make(reward, **kwargs):
        env = llm_coop_envs.make("tldr-v2", split="all", reward=reward, **kwargs)
        env.reset(seed=0, options={"index": 3})
        return env
    return make


TEXTS = {"tldr": "A short summary of the post.", "detail": "A longer text that says more about what the post tells."}


def test_writing_weighted_list_and_context(tldr_envs):
    seen = {}

    def words(replies, context):
        seen.update(context=dict(context))
        return {"tldr": len(replies["tldr"].split()), "detail": len(replies["detail"].split())}

    _, levels, _, _, plain = tldr_envs("levels").step(TEXTS)
    _, rewards, _, _, infos = tldr_envs(["levels", (words, 0.1)]).step(TEXTS)
    expected = dict(plain["tldr"]["reward_components"], **{"words/tldr": 0.6, "words/detail": 1.1})
    assert infos["tldr"]["reward_components"] == pytest.approx(expected)
    assert rewards["detail"] == pytest.approx(levels["detail"] + 1.7)
    assert set(seen["context"]) == documented_keys("writing") - {"grader"} and seen["context"]["reference"]
    assert seen["context"] == infos["tldr"]["details"]
    assert infos["tldr"]["feedback"] == plain["tldr"]["feedback"]


def test_writing_batched_function_through_step_many(tldr_envs):
    calls = []

    @batched_reward
    def detail_words(replies_list, contexts_list):
        calls.append([c["task_id"] for c in contexts_list])
        return [len(r["detail"].split()) for r in replies_list]

    env = tldr_envs(["levels", detail_words], reward_mode="per_agent")
    actions = [dict(TEXTS, detail=TEXTS["detail"] + " More." * n) for n in range(3)]
    results = step_many([copy.deepcopy(env) for _ in actions], actions)
    assert len(calls) == 1 and len(calls[0]) == 3
    components = [r[4]["detail"]["reward_components"]["detail_words"] for r in results]
    assert components == [11.0, 12.0, 13.0]
    assert all(r[1]["tldr"] == r[1]["detail"] for r in results)  # a reward with a function is shared whole


def test_writing_rejects_a_keyword_only_function(tldr_envs):
    with pytest.raises(TypeError, match="'uses' must take two positional arguments"):
        def uses(*, replies):
            return 1.0
        tldr_envs(["levels", uses])
