"""Custom rewards: one protocol for every task family, combined with the bundled reward in a weighted list.

## A reward function

```python
import llm_coop_envs


def brevity(replies, context):
    return -0.01 * sum(len(text.split()) for text in replies.values())


env = llm_coop_envs.make("coop_basics-v2", reward=["levels", (brevity, 0.5)])
observations, infos = env.reset(seed=0)
_, rewards, _, _, infos = env.step({"helper": "def aux(x): return x", "main": "no code"})
print(rewards["main"], infos["main"]["reward_components"])  # levels' components and "brevity"
```

A reward function is called as ``f(replies, context)``: ``replies`` maps each agent role to its raw
reply text, ``context`` is a read-only mapping that the task family fills (its keys are listed
below). It returns a number, a ``RewardResult`` (a total and its named components), or a mapping of
named numbers (summed). Booleans, strings, NaN and infinities are errors.

## Choosing the reward: ``reward=``

Every env factory (``llm_coop_envs.make(..., reward=...)``) takes one of:

| ``reward=`` | total | ``reward_components`` |
| --- | --- | --- |
| a bundled reward's name: ``"levels"`` (the default), ``"execution"`` (coding only) | the bundled reward | its own |
| a function alone: ``my_fn`` | ``my_fn`` alone; it *replaces* the bundled reward | ``custom`` for a number, else the parts it returns |
| a list: ``["levels", (my_fn, 0.5)]`` | the weighted sum 1.0 × levels + 0.5 × ``my_fn`` | the bundled reward's components × its weight, and ``my_fn`` (a number) or ``my_fn/<part>`` (named parts) × its weight |

A list element is a bundled reward's name, a function, or a pair ``(name or function, weight)``; an
element without a weight has weight 1.0. The weights sit next to the functions rather than in a
second list because the writing envs already use ``reward_weights=`` for the weights of their
levels. A list holds at most one bundled name; a function is named by its ``__name__``, and two
functions with one name, or a function named like a component of the bundled reward, are an error
when the env is made (rename it with ``def`` or by setting ``__name__``). Feedback, ``solved`` and
``details`` never depend on ``reward=``.

## Batched functions

```python
import copy

import llm_coop_envs
from llm_coop_envs import batched_reward


@batched_reward
def length(replies_list, contexts_list):
    return [len(replies["main"]) / 1000 for replies in replies_list]  # one value per sample


env = llm_coop_envs.make("coop_basics-v2", reward=["levels", (length, 0.1)])
env.reset(seed=0)
copies = [copy.deepcopy(env) for _ in range(4)]
results = llm_coop_envs.step_many(copies, [{"helper": "", "main": "x" * n} for n in range(4)])  # one call of length()
```

A function decorated with ``@batched_reward`` (which sets its attribute ``batched = True``; any
callable with that attribute counts) takes lists of replies and contexts and returns a list of
values of the same length. ``env.step`` calls it with lists of length one; ``llm_coop_envs.step_many``
(used by the trainer's rollouts and the TRL integration) calls it once per task for every env it
steps together, so a function that runs a model can score a whole group in one forward pass.

## Errors

A reward function is user code: when it raises, the step raises a ``RuntimeError`` naming the
function and the task; when it returns something else than described above (a bool, a string,
NaN or an infinity, a list of the wrong length from a batched function), the step raises a
``TypeError`` or ``ValueError`` naming the function. A broken reward is never scored as 0.

## The judgement: ``context`` and ``details``

Each joint reply is judged once, into one read-only, JSON-friendly mapping with one name per fact:
the reward functions get it as ``context``, and the env returns the same mapping as
``infos[agent]["details"]`` (with per-agent rewards, the paired programs' mappings go only to the
reward functions). Its keys, per task family:

### Coding envs

| key | value |
| --- | --- |
| ``task_id``, ``problem`` | the problem's id; the dataset row (a dict) |
| ``entry_point``, ``rules`` | the function name; the env version's scoring rules (``"v0"``, ``"v1"``, ``"v2"``) |
| ``parse`` | per agent: how its code was found (fenced, bare, empty), the pieces kept, what was dropped |
| ``program``, ``code`` | the program text that ran; each agent's part of it (``code["helper"]``, ``code["main"]``), after the drops of the coding page |
| ``helper_functions``, ``main_defined`` | the helper functions the program keeps; whether main defines the entry point |
| ``dropped_from_helper``, ``dropped_from_main`` | what was left out of each agent's code |
| ``dropped_shadowing`` | under ``v2`` rules, the builtin or standard-library names whose helper definitions were left out |
| ``syntax_error`` | None, or where the program does not compile: ``message``, ``owner``, ``line``, ``col``, ``program_line`` |
| ``scoring_tests``, ``public_tests`` | the labels of the tests that score (under ``v1`` rules the hidden ones) and of the public tests (shown in feedback, never scored) |
| ``passed``, ``total`` | scoring tests passed, of all scoring tests |
| ``public_passed``, ``public_total`` | the same for the public tests |
| ``public_ran`` | whether the public tests ran (under ``v2`` rules they run in their own process only when a next turn will read their feedback) |
| ``tests`` | per test run: ``test`` (its label), ``public``, ``status``, ``error_type``, ``message``, ``fallback``; empty when nothing ran |
| ``sandbox`` | the run: ``status``, ``error_type``, ``error_message``, ``duration_s``, ``backend``, ``stdout``, ``stderr``; None when nothing ran |
| ``helper_use`` | the cooperation facts read from the code: ``calls_helper``, ``thin_wrapper``, ``ignores_return``, ``used`` |
| ``helper_dependence`` | under ``v2`` rules the counterfactual runs (``llm_coop_envs.coding.dependence``): ``checked``, ``needed``, ``stand_ins`` (each one's outcome), ``stand_ins_passed``, ``pairings``, ``aux_alone_passes``; None under older rules |

The raw replies are the function's ``replies``. Before this mapping the context named some facts
otherwise (``helper_code`` and ``main_code`` are ``code``; ``result`` is ``passed``, ``total``,
``tests`` and ``sandbox``; ``tests`` as labels is ``scoring_tests``; ``uses_helper``, ``thin_wrapper``
and ``ignores_return`` are in ``helper_use``; ``syntax_error`` was the message alone), and a reward
could be a function of keyword arguments named like those keys; that form is gone: a function
must take ``(replies, context)``.

### Writing envs

| key | value |
| --- | --- |
| ``task_id`` | the item's id |
| ``source`` | the text both roles write from (the post, the abstract) |
| ``title``, ``subreddit`` | the row's title and subreddit (``""`` when it has none; arXiv rows have no subreddit) |
| ``reference`` | the author's TL;DR, or None (arXiv) |
| ``levels`` | per level reached: its ``score`` and whether it ``passed`` |
| ``metrics`` | the raw measurements (word counts, distinct ratios, copied fractions, ratio, overlap, transitions, ROUGE, ...) |
| ``level_reward`` | the levels' total (also when a custom reward replaces it) |
| ``grader`` | with a grader only: its ``scores``, ``error``, whether the grades were ``cached`` and whether the texts were ``sent`` |
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, TypeVar

from llm_coop_envs.core.reward import RewardResult

RewardFn = Callable[[Mapping[str, str], Mapping[str, Any]], Any]
"""``f(replies, context) -> number | RewardResult | Mapping[str, number]`` (see the module docstring)."""
F = TypeVar("F", bound=Callable[..., Any])


def batched_reward(function: F) -> F:
    """Mark a reward function as batched: it takes lists of replies and contexts and returns a list."""
    function.batched = True  # type: ignore[attr-defined]
    return function


@dataclasses.dataclass(frozen=True)
class Term:
    """One user function of a reward, with its weight."""

    name: str
    function: Callable[..., Any]
    weight: float
    batched: bool


@dataclasses.dataclass(frozen=True)
class CombinedReward:
    """The resolved ``reward=``: the bundled reward (by name, with its weight) and the user functions."""

    bundled: str | None = "levels"
    bundled_weight: float = 1.0
    functions: tuple[Term, ...] = ()
    replaces: bool = False
    """A function alone: its result is the reward, named as it returns it (``custom`` for a number)."""

    @property
    def is_bundled_only(self) -> bool:
        """The bundled reward, unchanged (no function, weight 1)."""
        return self.bundled is not None and not self.functions and self.bundled_weight == 1.0

    def combine(self, bundled: Sequence[RewardResult] | None, replies: Sequence[Mapping[str, str]],
                contexts: Sequence[Mapping[str, Any]]) -> list[RewardResult]:
        """The reward of each sample; ``bundled`` holds the bundled reward of each (None without one)."""
        replies = [MappingProxyType(dict(r)) for r in replies]
        contexts = [c if isinstance(c, MappingProxyType) else MappingProxyType(dict(c)) for c in contexts]
        values = [_values(term, replies, contexts) for term in self.functions]
        if self.replaces:
            return [RewardResult.coerce(value) for value in values[0]]
        results = []
        for i in range(len(replies)):
            scored = [] if bundled is None else [(None, self.bundled_weight, bundled[i])]
            scored += [(term.name, term.weight, term_values[i]) for term, term_values in zip(self.functions, values)]
            results.append(_weighted_sum(scored))
        return results


def resolve_reward(spec: Any, bundled: Mapping[str, Sequence[str]]) -> CombinedReward:
    """``reward=`` as the env factories take it. ``bundled`` maps each bundled reward's name to its
    component names."""
    if isinstance(spec, str):
        return CombinedReward(bundled=_bundled_name(spec, bundled))
    if callable(spec):
        return CombinedReward(bundled=None, functions=(_term(spec, 1.0),), replaces=True)
    if isinstance(spec, list) and spec:
        return _combined(spec, bundled)
    raise TypeError(f"reward= takes {_choices(bundled)}, a function f(replies, context), or a non-empty list such as "
                    f"[{next(iter(bundled))!r}, (my_fn, 0.5)]; got {spec!r}.")


def _combined(spec: list, bundled: Mapping[str, Sequence[str]]) -> CombinedReward:
    entries = [_entry(element) for element in spec]
    names = [(_bundled_name(item, bundled), weight) for item, weight in entries if isinstance(item, str)]
    if len(names) > 1:
        raise ValueError(f"reward= lists {len(names)} bundled rewards {[n for n, _ in names]}; a list holds at most one.")
    terms = tuple(_term(item, weight) for item, weight in entries if not isinstance(item, str))
    taken = list(bundled[names[0][0]]) if names else []
    for term in terms:
        if term.name in taken:
            raise ValueError(f"Two reward parts are named {term.name!r} (a function and a component or another function): "
                             "give the function another name (def, or set its __name__).")
        taken.append(term.name)
    bundled_name, bundled_weight = names[0] if names else (None, 0.0)
    return CombinedReward(bundled=bundled_name, bundled_weight=bundled_weight, functions=terms)


def _entry(element: Any) -> tuple[Any, float]:
    """A list element as (a bundled name or a function, its weight)."""
    if isinstance(element, tuple) and len(element) == 2:
        item, weight = element
        if isinstance(weight, bool) or not isinstance(weight, numbers.Real) or not math.isfinite(weight):
            raise TypeError(f"The weight of {_label(item)} in reward= must be a finite number, got {weight!r}.")
        return item, float(weight)
    if isinstance(element, str) or callable(element):
        return element, 1.0
    raise TypeError(f"A reward= list element is a bundled reward's name, a function or a pair (element, weight); got {element!r}.")


def _bundled_name(name: Any, bundled: Mapping[str, Sequence[str]]) -> str:
    if name not in bundled:
        raise ValueError(f"reward={name!r}: use {_choices(bundled)}, a function f(replies, context), or a list of them.")
    return name


def _choices(bundled: Mapping[str, Sequence[str]]) -> str:
    return " or ".join(repr(name) for name in bundled)


def _label(item: Any) -> str:
    return repr(item) if isinstance(item, str) else repr(getattr(item, "__name__", type(item).__name__))


def _term(function: Any, weight: float) -> Term:
    if not callable(function):
        raise TypeError(f"reward= element {function!r} is neither a bundled reward's name nor a callable.")
    name = getattr(function, "__name__", type(function).__name__)
    if not takes_replies_and_context(function):
        raise TypeError(f"The reward function {name!r} must take two positional arguments (replies, context): "
                        f"write `def {name}(replies, context):` and read what it needs from context "
                        "(its keys: llm_coop_envs.core.reward_fns).")
    return Term(name, function, weight, getattr(function, "batched", False) is True)


def takes_replies_and_context(function: Callable[..., Any]) -> bool:
    """Whether ``function(replies, context)`` binds (True when its signature cannot be read)."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return True
    try:
        signature.bind(None, None)
    except TypeError:
        return False
    return True


def _values(term: Term, replies: list[Mapping[str, str]], contexts: list[Mapping[str, Any]]) -> list[float | RewardResult]:
    """The term's checked value for each sample: one call when batched, else one call per sample."""
    if not term.batched:
        return [_checked(term.name, _call(term, r, c, [c])) for r, c in zip(replies, contexts)]
    returned = _call(term, replies, contexts, contexts)
    if isinstance(returned, (str, bytes, Mapping, RewardResult)) or not hasattr(returned, "__iter__"):
        raise TypeError(f"The batched reward function {term.name!r} returned {returned!r}: return a list with one value per sample.")
    returned = list(returned)
    if len(returned) != len(replies):
        raise ValueError(f"The batched reward function {term.name!r} returned {len(returned)} values for {len(replies)} samples.")
    return [_checked(term.name, value) for value in returned]


def _call(term: Term, replies: Any, contexts: Any, where: Sequence[Mapping[str, Any]]) -> Any:
    try:
        return term.function(replies, contexts)
    except Exception as error:
        tasks = ", ".join(repr(c.get("task_id")) for c in where[:3]) + (", ..." if len(where) > 3 else "")
        raise RuntimeError(f"The reward function {term.name!r} raised {type(error).__name__} on task {tasks}: {error}") from error


def _checked(name: str, value: Any) -> float | RewardResult:
    """A returned value as a float or a RewardResult, or a clear error naming the function."""
    if isinstance(value, RewardResult):
        for part, number in value.components.items():
            _number(name, number, f" (component {part!r})")
        return value
    if isinstance(value, Mapping):
        if not all(isinstance(part, str) for part in value):
            raise TypeError(f"The reward function {name!r} returned {value!r}: name its parts with strings.")
        return RewardResult.from_components({part: _number(name, v, f" (part {part!r})") for part, v in value.items()})
    return _number(name, value, "")


def _number(name: str, value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"The reward function {name!r} returned {value!r}{where}: return a number, a RewardResult "
                        "or a mapping of named numbers.")
    if not math.isfinite(value):
        raise ValueError(f"The reward function {name!r} returned {value!r}{where}: a reward must be a finite number.")
    return float(value)


def _weighted_sum(scored: list[tuple[str | None, float, float | RewardResult]]) -> RewardResult:
    """Σ weight × total; components: the bundled reward's (name None) × its weight, each function's
    under its name (a number) or ``name/part`` (named parts)."""
    components: dict[str, float] = {}
    for name, weight, value in scored:
        result = value if isinstance(value, RewardResult) else RewardResult(total=value)
        parts = _part_names(name, result)
        clash = set(parts) & set(components)
        if clash:
            raise ValueError(f"Reward components {sorted(clash)} are named twice: rename the function or its parts.")
        components.update({part: weight * v for part, v in parts.items()})
    total = math.fsum(weight * (v.total if isinstance(v, RewardResult) else v) for _, weight, v in scored)
    return RewardResult(total=total, components=components)


def _part_names(name: str | None, result: RewardResult) -> dict[str, float]:
    if name is None:
        return dict(result.components)
    if not result.components:
        return {name: result.total}
    return {f"{name}/{part}": v for part, v in result.components.items()}
