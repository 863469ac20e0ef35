"""# CoopProcedural (``coop_procedural-v1``)

A cooperative coding suite generated from seeds, in the spirit of Reasoning Gym's task
generators: each **family** is a small generator ``generate(rng, level)`` that draws a problem's
domain, names, wording and parameters, writes a reference ``aux`` for the **helper** and a
reference entry point for **main** that calls it, and proposes inputs; the expected values are
computed by running the two references. Training draws fresh problems without end; the test set
and the held-out families are fixed. Everything is generated inside the package: it works offline,
and every text and line of code is the project's own (invented domains: shop orders, game scores,
sensor logs, ticket codes, ...), not taken from any public benchmark.

```python
import llm_coop_envs
env = llm_coop_envs.make("coop_procedural-v1", split="test", level=1)
observations, infos = env.reset(seed=0)
```

The next version, with a level the pair can only solve together, is built but not registered yet
(see "The cooperative level" below).

| | |
|---|---|
| Agents | ``helper``, ``main``; ``team="single"``: ``main`` alone |
| Observation / action | any Unicode text (``UnicodeText`` space) |
| ``train`` | 1,000,000 problems, each built on first use from its index (family ``i % 12``, level ``(i // 12) % 3``, seed from ``i``) |
| ``test`` | 360 fixed problems: 10 per training family and level, in turns (problem ``i`` is level ``i % 3 + 1`` of family ``(i // 3) % 12``), so the first 3 span every level, the first 36 every family at every level, and a split narrowed to one level takes its families in turns |
| ``heldout_families`` | 96 fixed problems: 8 per held-out family and level, in the same turns (family ``(i // 3) % 4``) |
| Tests | 1-2 public examples in the docstring (feedback), 5-8 hidden asserts (score) |
| Reward | joint, the same for both agents: ``"levels"`` (default, max 4.0) under the ``v2`` scoring rules |
| Solved | every hidden test passes |
| Untrained default model | measured on v0: as a pair, level 1 of ``test``: 25.0 % greedy pass rate (30/120); at temperature 0.6 / top-p 0.6, G = 4, the tests component varies in 7 of 12 level-1 groups, 3 of 24 at levels 2-3 (``benchmarks/results/coop_procedural_calibration.md``) |

## Problems

Every problem is a HumanEval-style row: ``prompt`` (main's signature and a docstring with one or two
``>>>`` examples), ``entry_point``, ``helper`` (``aux``'s signature and one sentence of what it
returns), ``reference_helper``, ``reference_main``, ``public_test`` (the examples as asserts),
``test`` (the hidden asserts, none calling main as an example does), and ``family``, ``level``,
``split``, ``helper_fact``. Its ``task_id`` is ``coop_procedural/<family>/L<level>/<hash>``, the
hash being the first 8 hex digits of the sha256 of what the agents see and what scores them.

From level 2 on, some families give the helper a fact that main's prompt lacks (``helper_fact``: a
rule, a small table, a constant): main's prompt only says what ``aux`` returns, so main needs ``aux``
to be right. At level 1 no family hides anything: main's prompt states the rule.

Every problem is checked when drawn: at least 5 hidden tests, none repeating a public example, at
least two different expected values and one that differs from the first argument, so a constant, the
identity or a table of the public examples fails a hidden test. v1 keeps only draws that also pass the
checks of ``llm_coop_envs.coding.procedural.draw_checks``: the public examples (chosen among the first
calls, or any call if every such choice gives it away) leave at least three of the family's
alternatives for a helper-only fact; no problem-blind reply (the most common expected value, ``[]``, the
first item, ``max``, ``min``, the length, the identity, a table of the public examples) passes more than
a third of the hidden tests; at most half of them share one expected value; and no stand-in ``aux``
passes them all with main's reference. The v0 draws that fail them are drawn again, so v1's splits hold
other problems than v0's. Still open: the facts of ``convert_amounts`` (7 rates) and ``valid_codes`` (a
divisor rule drawn from 3 divisors on half the draws) take fewer than 10 values or one value more
often than 10 %; the draw checks cannot widen a generator. Each reference is at most 400
characters (well under 128 tokens of the default model's tokenizer).

## Families

Training (``*``: from level 2 on, the helper alone is told a fact). Level 1 of each family is one
step stated in both prompts, given in brackets:

* ``bonus_scores``\\*: ``aux`` applies a bonus rule to a score; main totals above a minimum or picks the best even one (level 1: ``score + k`` or ``score * k`` for every score).
* ``order_totals``: ``aux`` prices one order (a bulk discount at level 3); main totals or counts affordable orders (level 1: the total of ``count * price`` over unit counts).
* ``clamp_readings``: ``aux`` clamps a reading into a range; main sums or counts changes (level 1: ``min(x, high)`` or ``max(x, low)`` for every reading).
* ``neighbour_gaps``: ``aux`` measures the step between two readings; main maximises or locates steep rises (level 1: ``abs(x - target)`` for every reading).
* ``digit_sums``: ``aux`` sums a number's digits; main counts lucky numbers or picks the heaviest (level 1: ``n % 10`` for every number).
* ``bucket_counts``: ``aux`` rounds a value down to its bucket; main counts per bucket or finds the busiest (level 1: ``x // width`` for every value).
* ``tag_words``: ``aux`` makes an upper-case tag of a word; main joins, or filters and de-duplicates (level 1: ``w.upper()`` or ``w[:k]`` for every word).
* ``initials``: ``aux`` gives a name's initials; main counts, or finds shared initials (level 1: ``name[0]`` for every first name).
* ``code_fees``\\*: ``aux`` looks a ticket code's fee up in a table; main filters or groups fees (level 1: ``days * fee`` for every stay).
* ``valid_codes``\\*: ``aux`` checks a code against a rule; main keeps or tallies valid codes (level 1: counts the codes starting with a stated letter).
* ``level_labels``\\*: ``aux`` labels a value by cut points; main counts per label or selects one label (level 1: two labels, one stated cut point).
* ``convert_amounts``\\*: ``aux`` converts an amount at an exchange rate; main totals, filters, or takes the spread (floats, compared with ``math.isclose``; level 1: ``amount * rate`` with a whole-number rate for every amount).

Held out (split ``heldout_families``, never drawn for training):

* ``letter_points``\\*: ``aux`` scores a word by letter values; main totals, picks the best or ranks words.
* ``longest_run``: ``aux`` says whether a value continues a run; main counts continuations, the longest run, or where it starts.
* ``mask_codes``: ``aux`` masks all but the last characters of a code; main lists, joins, or filters and de-duplicates.
* ``category_weights``\\*: ``aux`` looks a category's weight up in a table; main weighs entries, per category, or finds the heaviest.

## The cooperative level (v2, level 4; not registered yet)

``coop_procedural-v2`` will hold **level 1** (v1's level-1 problems, nothing hidden) and **level 4, the
cooperative level**, with prompts a pair of small models can use (``llm_coop_envs.coding.pair_prompts``).
It is built by ``llm_coop_envs.coding.procedural.env.env_v2`` and is registered only once its
calibration with the default model is done (an id never changes meaning after registration):

```python
from llm_coop_envs.coding.procedural.env import env_v2
env = env_v2(split="test", level=4)            # the cooperative level
observations, infos = env.reset(seed=0)
env.metadata["suite"]["cooperative_levels"]    # [4]
```

Every family, the held-out ones included, has a cooperative level of one shape: level 1's single step
over a flat list, with the step's fact (a constant, a rule, a small table) told to the helper only.

* **Main** is told what ``aux`` returns, not the fact, and the stated expression calls it, on a line of
  its own (``[aux(reading) for reading in readings]``, ``sum(aux(count) for count in counts)``); its one
  public example is the empty list, which shows the form of the answer and leaves every alternative
  fact open (the draw checks ask for three).
* **The helper** sees only ``aux``'s contract and the fact, as the function to complete; never main's
  problem. The training families state the fact in words, the held-out families with its expression.
* **One agent** (``team="single"``) is shown the fact as well, with ``aux`` as a function to complete
  above main's, so it has what the pair has. On a level-1 problem (no helper needed) main's prompt is the
  single agent's word for word.
* A reply's **first code block** is its code (the prompts ask for one): a small model repeats its block
  until the token cap cuts the last copy, which could still parse and win.

Each fact takes at least 10 values, drawn uniformly so that none comes up more than one draw in ten,
and none is a value the judge's stand-ins return (0, 1, True, False, ``''``, None, ``[]``). The
cooperative level's facts of ``convert_amounts`` (19 whole-number rates) and ``valid_codes`` (8 letters
x 2 lengths) are wide, where v1's levels 2-3 drew them from 7 rates and a rule often drawn from 3 divisors.
So main's code solves a problem only with the helper's ``aux``: with the reference main, a stub helper or
prose fails every problem, and main with its family's most frequent fact inlined passes at most a tenth.
Its calibration on training draws (``benchmarks/results/coop_procedural_v2_calibration.md``, with the
commands) meets every bar but one: the untrained pair passes 29.2 % greedy, main alone with prose or a stub
helper 0 %, main alone equals the single agent on level 1, the held-out families' draws 12.5 %; **the tests
vary in 17-29 % of G = 4 groups at temperature / top-p 0.6 (bar: half)**, so the level stays unregistered
until that bar is decided. A cooperative problem is told apart from another by its whole content (main's prompt is the same for
many facts); train and test never share main's prompt or a hidden test, as at every level. Per family:

| family | main (stated expression) | the helper's fact |
|---|---|---|
| ``bonus_scores`` | ``[aux(score) for score in scores]`` | the bonus added (2-20) |
| ``order_totals`` | ``sum(aux(count) for count in counts)`` | the unit price (2-20) |
| ``clamp_readings`` | ``[aux(reading) for ...]`` | the cap (12-30) |
| ``neighbour_gaps`` | ``[aux(reading) for ...]`` | the target (10-40) |
| ``digit_sums`` | ``[aux(number) for ...]`` | the check divisor (3-19) |
| ``bucket_counts`` | ``[aux(value) for ...]`` | the bucket width (2-16) |
| ``tag_words`` | ``[aux(word) for ...]`` | the tag's code (16 codes) |
| ``initials`` | ``[aux(name) for ...]`` | the initial's mark (12 marks) |
| ``code_fees`` | ``[aux(code) for ...]`` | a fee table of three letters and a default |
| ``valid_codes`` | ``[code for code in codes if aux(code)]`` | the rule's letter and length |
| ``level_labels`` | ``[aux(x) for ...]`` | the cut point (10-30) |
| ``convert_amounts`` | ``sum(aux(amount) for ...)`` | the exchange rate (2-20) |
| ``letter_points`` (held out) | ``[aux(word) for ...]`` | vowel and consonant points |
| ``longest_run`` (held out) | ``[aux(a, b) for a, b in zip(values, values[1:])]`` | the run's step (2-15) |
| ``mask_codes`` (held out) | ``[aux(code) for ...]`` | the mask character (12 marks) |
| ``category_weights`` (held out) | ``sum(aux(category) for ...)`` | a weight table of three categories |

## Levels

* **1**: as easy as ``coop_basics`` tier 1. The input is a flat list of 1-4 ints or words; ``aux`` is
  a single step (``x + k``, ``x * k``, ``x // k``, ``abs(x - k)``, ``w.upper()``, ``w[0]``, ...) that
  main's docstring states in words and as code (``abs(reading - 25)``), so main can solve it with or
  without ``aux``; main is one comprehension or ``sum``; one public example keeps the prompt short. No helper-only fact: the held-out families keep their level 1 of v0 (a
  fact for ``letter_points`` and ``category_weights``).
* **2**: main adds a condition, a second argument, a join or a dict of counts (lists of 2-6 items).
* **3**: main composes more (de-duplication, arg-max with ties, changes between neighbours, a
  grouped total), inputs grow to 9 items and include the empty list and repeats.

## Splits never meet

A draw is kept for ``train`` only when the first bit of the sha256 of its prompt and of its hidden
test are both 0, for ``test`` only when both are 1 (otherwise the next seed is drawn). So no test
problem has the prompt or the hidden test of any training problem, whatever the index. The held-out
families are never drawn for training.

## Reward

The coding rewards of every coding env (``llm_coop_envs.coding.reward``, on the
[Coding tasks](coding.md) page), under the ``v2`` scoring rules (``llm_coop_envs.coding.rules``):
only the hidden asserts score, cooperation is paid only when main's program needs ``aux`` (stand-ins
fail, the reference pairings pass), and the public examples alone are the multi-turn feedback. Every reference helper and main earn the maximum 4.0 of ``"levels"`` in the
package's tests.

## Arguments

| argument | default | meaning |
|---|---|---|
| ``split`` | ``"train"`` | ``"train"`` (endless fresh draws), ``"test"`` (fixed, training families) or ``"heldout_families"`` |
| ``level`` | ``None`` | only these levels: an int (``1``) or a list (``[1, 2]``); ``None`` is every level (1-3) |
| ``problems_per_cell`` | ``None`` | size of a fixed split: problems per (family, level), 1-200; ``None`` is 10 for ``test``, 8 for ``heldout_families``. A larger split appends to the default one (its first problems are the default split's, in the same turns), for evaluations that need more held-out problems |
| ``reward``, ``sandbox``, ``team``, ``reward_mode`` | | as in ``coop_basics-v2`` |
| ``num_turns``, ``feedback``, ``protocol``, ``share_replies``, ``stop_when_solved``, ``render_mode``, ... | | passed to ``CoopEnv`` |

``level`` narrows **every** split, the fixed ones included: ``split="test", level=1`` holds the 120
level-1 test problems, not 360. The env says what it holds in ``env.metadata["suite"]`` (split,
levels, ``narrowed``, families, number of problems), the make call's keywords are kept in its spec,
and each ``infos[agent]["task_id"]`` names the problem's level. To evaluate a run trained on a
narrowed level, make the evaluation env with ``level=None`` to keep every level.

## Version history

* v2: level 1 (v1's problems) and the cooperative level 4 of every family, held-out ones included
  (levels 2-3, whose helper-only facts main read from its own examples or were drawn from few values,
  are v1's only); the pair prompts of ``llm_coop_envs.coding.pair_prompts``; ``team="single"`` is shown the
  helper's fact. Same ``v2`` scoring rules and draw checks.
* v1: v0's generators under the ``v2`` scoring rules, keeping only draws that pass the v1 draw checks
  (above); the splits hold other problems than v0's.
* v0 (superseded; ``make`` warns with its holes): first version (12 training families, 4 held-out families, levels 1-3, ``v1`` scoring rules).
  Level 1 of the training families was then made one stated step over a flat list (the untrained
  default pair passed none of the first level-1 problems); levels 2-3 and the held-out families are unchanged.
  The fixed splits then took their levels in turns within each family (the first 3 problems span
  every level; before, the first 12 were all level 1): the same problems in another order, and a split
  narrowed to one level keeps its order, so the scores of a whole split and of a split narrowed to one
  level are unchanged; an evaluation of the first N problems of a wider split now reads other problems.
"""

from llm_coop_envs.coding.procedural.env import env
from llm_coop_envs.coding.procedural.families import FAMILIES, HELDOUT_FAMILIES, LEVELS, TRAIN_FAMILIES
from llm_coop_envs.coding.procedural.generate import TrainRows, fixed_rows, generate_row

__all__ = ["env", "FAMILIES", "HELDOUT_FAMILIES", "LEVELS", "TRAIN_FAMILIES", "TrainRows", "fixed_rows",
           "generate_row"]
