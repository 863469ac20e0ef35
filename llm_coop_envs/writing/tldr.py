"""# TL;DR (`tldr-v2`)

Two writers summarise one Reddit post together: `tldr` writes a concise summary (one or a few
sentences), `detail` writes a detailed summary that adds what the short one leaves out, without
repeating it. Both see the post; neither sees the other's text in the first turn.

```python
import llm_coop_envs
env = llm_coop_envs.make("tldr-v2", split="test", num_turns=2)
observations, infos = env.reset(seed=0)
observations, rewards, terminations, truncations, infos = env.step({"tldr": "...", "detail": "..."})
```

| | |
|---|---|
| Agents | `tldr`, `detail` (in this order in the sequential protocol) |
| Observation space | `UnicodeText`: the prompt, later turns add the agent's previous reply and feedback |
| Action space | `UnicodeText`: any string (capped at `max_reply_chars`) |
| Reward | joint, the same for both agents; levels below, maximum 6.0 (7.0 with a judge) |
| Data | `trl-lib/tldr` on the Hub, offline `tldr.jsonl` (500 posts) |
| Problem ids | the Reddit post id (`t3_1wbdsh`); rows without an id: `tldr/<row position>` |

## Reward (`reward="levels"`)

Gated levels, run in order; **a failed level stops the scoring** (later levels score 0). Each scores
in [0, 1] times its weight (`reward_weights`, default 1 each); the total is the sum of the
components, which `infos[agent]["reward_components"]` lists as `structure`, `grounding`,
`complementarity`, `style`, `coherence`, `rouge` (and `judge`):

1. **structure**: gates on each text (length in words, distinct words, function words, no copying
   from the post), then the length ratio words(`detail`) / words(`tldr`);
2. **grounding**: the two texts are about this post (IDF-weighted share of their content words
   found in the post, coverage of the post's content words, a floor for the `detail` text); the
   levels after it are multiplied by its score;
3. **complementarity** (`added`): the `detail` text brings post content the `tldr` text leaves out;
4. **style consistency**: vocabulary overlap of the two texts, in a band (repetition fails);
5. **coherence**: transition phrases of several kinds, not stuffed, and the **sentence order**: no
   text opens with a connective that needs a sentence before it, and the `detail` text, which
   retells the post, does not run against the post's order (the `tldr` text's order is not compared);
6. **rouge**: ROUGE F1 of the `tldr` text against the author's TL;DR, scored whenever the gates pass;
7. **judge** (optional, off by default): with `judge={"base_url": ..., "model": ...}` an
   OpenAI-compatible chat endpoint grades the pair on the three criteria (1–5 each, see
   `llm_coop_envs.writing.judge`); the component is the mean grade mapped to [0, 1]. Not sent for
   pairs that fail the gates; cached by request hash; an unreachable endpoint, a timeout or a
   malformed answer gives 0 with the reason in `details["judge"]` (or raises with
   `on_error="raise"`).

Every threshold of every version, and what each level measures exactly, is in one table:
[Writing tasks: reward levels](writing.md#reward-levels).

`solved` (which ends a multi-turn episode early when `stop_when_solved`) means levels 1–5 all at
full credit; ROUGE and the judge are not required. `infos[agent]["feedback"]` (passed on to the
next turn by the default `"tests"` feedback) names the failed level and the numbers.
`infos[agent]["details"]` holds the raw measurements (word counts, shares, coverage, ratio,
overlap, transitions, ROUGE).

Reward hacks and what they get are kept as tests on 10 posts (`tests/writing/test_probes.py`);
the table is on the [writing page](writing.md#reward-hacking-probes). A genuine pair (the author's
TL;DR and a faithful detailed summary) scores 5.4–6.0; a generic template pair about 1.0.

## Arguments

| argument | default | meaning |
|---|---|---|
| `split` | `"train"` | `"train"` (rows 0–399), `"test"` (rows 400–499) or `"all"`; a user's file: first 80 % / rest |
| `data_path` | `None` | a JSON or JSON Lines file of rows: `post` (+ `title`, `subreddit`, `summary`, `id`) or the Hub layout `prompt`/`completion` |
| `reward` | `"levels"` | or a function `f(replies, context)`, alone or in a weighted list with `"levels"`: see [Custom rewards](rewards.md) |
| `reward_config` | `TLDR_V2_LEVELS` | a `LevelConfig` with every threshold of the levels (`llm_coop_envs.writing.thresholds`) |
| `reward_weights` | all 1.0 | a `RewardWeights` or a dict such as `{"rouge": 0.0}` |
| `reward_mode` | `"joint"` | `"per_agent"`: each role also gets its own reward where the levels separate (docs: writing tasks, per-agent rewards) |
| `judge` | `None` | a dict of `JudgeConfig` options (`base_url`, `model`, `api_key_env`, `timeout_s`, `max_retries`, `on_error`, ...) or a `WritingJudge` |
| other | | passed to `CoopEnv`: `num_turns`, `feedback`, `protocol`, `share_replies`, `stop_when_solved`, `max_reply_chars`, `render_mode` |

With a custom reward, `solved`, feedback and `details` still come from the levels
(`details["level_reward"]` is the level total). Word weights for grounding come from every row of
the data file, so a problem scores the same in every split.

## Version history

- v2: v1 plus the sentence-order check in the coherence level; honest pairs in order score as on
  v1. Made by `llm_coop_envs.writing.tldr.env_v2`.
- v1 (deprecated; `make("tldr-v1")` warns): adds what v0 lacked, a check that the texts are about their own post: the function-word and
  in-order copy gates, grounding (which also scales the later levels) and complementarity scored
  from the post. Maximum 6.0. Made by `llm_coop_envs.writing.tldr.env_v1`. Its hole: sentence order
  is not checked, so the sentences of a good pair shuffled within each text keep 98–100 % of its reward.
- v0 (deprecated; `make("tldr-v0")` warns): levels structure, style, coherence and ROUGE, maximum
  4.0. Its hole: nothing but ROUGE of the TL;DR looks at the post, so a generic pair about no post
  in particular scores about 3.0 of 4.0 on every post and a good pair written for another post
  keeps about 75 % of the genuine score. It followed the MAGRPO paper's gated levels (length
  bounds, length ratio 1.6–3.2 with ramps to 1.1 and 5.0) and fixed its weaknesses: transitions
  matched as whole words, without ambiguous words ("as", "if", "so", "then"); vocabulary overlap
  scored in a band, so repetition is penalised; degenerate and copied texts fail; word counts
  instead of characters for the ratio; ROUGE against the author's TL;DR as its own component.
"""

from __future__ import annotations

from llm_coop_envs.writing.factory import version_env
from llm_coop_envs.writing.items import tldr_item
from llm_coop_envs.writing.prompts import detail_prompt, tldr_prompt
from llm_coop_envs.writing.task import WritingSpec
from llm_coop_envs.writing.thresholds import TLDR_LEVELS, TLDR_V1_LEVELS, TLDR_V2_LEVELS

SPEC = WritingSpec(
    name="tldr",
    agents=("tldr", "detail"),
    source_name="post",
    prompts={"tldr": tldr_prompt, "detail": detail_prompt},
    uses_reference=True,
    description=(
        "Two writers summarise a Reddit post: `tldr` writes a concise summary of one or a few sentences, "
        "`detail` a longer summary that adds the details, reasons and context the short one leaves out."
    ),
)


TLDR_V0_HOLE = (
    "tldr-v0 does not check that the texts are about their post (only ROUGE of the TL;DR looks at it): "
    "a generic pair about no post in particular, or a good pair written for another post, keeps most of "
    "the reward. Use tldr-v2, which adds grounding in the post and complementarity."
)


TLDR_V1_HOLE = (
    "tldr-v1 does not check sentence order: the sentences of a good pair shuffled within each text keep "
    "98-100 % of its reward, and shuffled across the two texts up to all of it. Use tldr-v2, which checks "
    "that no text opens with a connective needing a sentence before it and that the retelling follows the "
    "post's order."
)


VERSION_LEVELS = {"tldr-v0": TLDR_LEVELS, "tldr-v1": TLDR_V1_LEVELS, "tldr-v2": TLDR_V2_LEVELS}
"""Each version's default thresholds (the docs' table of every threshold is generated from these)."""


env_v2 = version_env(SPEC, "tldr", tldr_item, VERSION_LEVELS["tldr-v2"],
                     "The ``tldr-v2`` environment; see the module docstring for the arguments.")
env_v1 = version_env(SPEC, "tldr", tldr_item, VERSION_LEVELS["tldr-v1"],
                     "The deprecated ``tldr-v1`` environment (sentence order not checked); warns with its hole.", TLDR_V1_HOLE)
env = version_env(SPEC, "tldr", tldr_item, VERSION_LEVELS["tldr-v0"],
                  "The deprecated ``tldr-v0`` environment (no grounding, no complementarity); warns with its hole.", TLDR_V0_HOLE)
