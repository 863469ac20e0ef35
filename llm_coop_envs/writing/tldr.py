"""# TL;DR (`tldr-v0`)

Two writers summarise one Reddit post together: `tldr` writes a concise summary (one or a few
sentences), `detail` writes a detailed summary that adds what the short one leaves out, without
repeating it. Both see the post; neither sees the other's text in the first turn.

```python
import llm_coop_envs
env = llm_coop_envs.make("tldr-v0", split="test", num_turns=2)
observations, infos = env.reset(seed=0)
observations, rewards, terminations, truncations, infos = env.step({"tldr": "...", "detail": "..."})
```

| | |
|---|---|
| Agents | `tldr`, `detail` (in this order in the sequential protocol) |
| Observation space | `UnicodeText`: the prompt, later turns add the agent's previous reply and feedback |
| Action space | `UnicodeText`: any string (capped at `max_reply_chars`) |
| Reward | joint, the same for both agents; levels below, maximum 4.0 |
| Data | `trl-lib/tldr` on the Hub, offline `tldr.jsonl` (500 posts) |
| Problem ids | the Reddit post id (`t3_1wbdsh`); rows without an id: `tldr/<row position>` |

## Reward (`reward="levels"`)

Words are `\\w+` tokens, lower-cased. The levels run in order and **a failed level stops the
scoring** (later levels score 0). Each level scores in [0, 1] and is multiplied by its weight
(`reward_weights`, default 1.0 each); the total is the sum of the four components, which
`infos[agent]["reward_components"]` lists as `structure`, `style`, `coherence`, `rouge`.

1. **structure** (gates, then the length ratio)
    - gates, any failing gives 0 for every component: `tldr` has 8–100 words, `detail` 16–300
      words; in each text at least 30 % of the words are distinct (else it is degenerate, e.g. one
      word repeated); at most 50 % of each text's word 4-grams occur in the post (else it is copied);
    - ratio r = words(`detail`) / words(`tldr`): structure = 0.5 + 0.5 × band(r) with full credit
      for 1.6 ≤ r ≤ 3.2, linear ramps to 0 at r = 1.1 and r = 5.0; outside 1.1–5.0 structure is 0.5
      and scoring stops.
2. **style consistency**: Jaccard similarity J of the two texts' content words (Porter stems,
   stopwords and numbers removed): style = 1 for 0.05 ≤ J ≤ 0.35, linear ramps to 0 at J = 0
   and J = 0.60; above 0.60 (one text repeating the other) style is 0 and scoring stops. Little
   overlap only loses credit: a detailed summary that adds what the TL;DR leaves out may share
   few words with it.
3. **coherence**: transition phrases (e.g. *however*, *as a result*, *for example*; ten categories)
   in the joint text, matched as whole words, longest phrase first. Credit by the number of
   distinct categories: 0 → 0 (fails), 1 → 0.5, 2 → 0.8, 3 or more → 1.0; times a density factor
   on matches per word: 1 up to 0.08, linear to 0 at 0.20; above 0.20 the level fails (spam).
4. **rouge**: mean F1 of ROUGE-1, ROUGE-2 and ROUGE-L (`rouge-score`, stemmed) of the `tldr`
   text against the author's TL;DR. Scored whenever the structure gates pass, independent of
   levels 1–3; 0 for rows without a TL;DR (set `reward_weights={"rouge": 0.0}` for such data).

`solved` (which ends a multi-turn episode early when `stop_when_solved`) means levels 1–3 all at
full credit; ROUGE is not required. `infos[agent]["feedback"]` (passed on to the next turn by the
default `"tests"` feedback) names the failed level and the numbers: word counts, ratio, overlap,
transitions found and density, ROUGE. `infos[agent]["details"]` holds the raw measurements.

Reward hacks and what they get (kept as tests): empty replies, one word repeated, the post copied
back → 0; the same text twice → at most 0.5 + ROUGE; transition spam → fails coherence. A genuine
pair (the author's TL;DR and a faithful longer summary) scores about 3.8.

## Arguments

| argument | default | meaning |
|---|---|---|
| `split` | `"train"` | `"train"` (rows 0–399), `"test"` (rows 400–499) or `"all"`; a user's file: first 80 % / rest |
| `data_path` | `None` | a JSON or JSON Lines file of rows: `post` (+ `title`, `subreddit`, `summary`, `id`) or the Hub layout `prompt`/`completion` |
| `reward` | `"levels"` | or a callable `reward(replies, example)` returning a number or a `RewardResult`; `example` has `task_id`, `source`, `title`, `subreddit`, `reference` |
| `reward_config` | `TLDR_LEVELS` | a `LevelConfig` with every threshold above (`llm_coop_envs.writing.config`) |
| `reward_weights` | all 1.0 | a `RewardWeights` or a dict such as `{"rouge": 0.0}` |
| other | | passed to `CoopEnv`: `num_turns`, `feedback`, `protocol`, `share_replies`, `stop_when_solved`, `max_reply_chars`, `render_mode` |

With a custom reward, `solved`, feedback and `details` still come from the levels
(`details["level_reward"]` is the level total).

## Version history

- v0: first version. Follows the MAGRPO paper's gated levels (length bounds, length ratio 1.6–3.2
  with ramps to 1.1 and 5.0) and fixes its weaknesses: transitions matched as whole words, without
  ambiguous words ("as", "if", "so", "then"); vocabulary overlap scored in a band, so repetition
  is penalised; degenerate and copied texts fail; word counts instead of characters for the
  ratio; ROUGE against the author's TL;DR as its own component.
"""

from __future__ import annotations

from typing import Any

from llm_coop_envs.core import CoopEnv
from llm_coop_envs.writing.config import TLDR_LEVELS, TLDR_V1_LEVELS
from llm_coop_envs.writing.factory import make_writing_env, warn_deprecated
from llm_coop_envs.writing.items import tldr_item
from llm_coop_envs.writing.prompts import detail_prompt, tldr_prompt
from llm_coop_envs.writing.task import WritingSpec

SPEC = WritingSpec(
    name="tldr",
    agents=("tldr", "detail"),
    source_name="post",
    prompts={"tldr": tldr_prompt, "detail": detail_prompt},
    uses_reference=True,
)


TLDR_V0_HOLE = (
    "tldr-v0 does not check that the texts are about their post (only ROUGE of the TL;DR looks at it): "
    "a generic pair about no post in particular, or a good pair written for another post, keeps most of "
    "the reward. Use tldr-v1, which adds grounding in the post and complementarity."
)


def env_v1(**kwargs: Any) -> CoopEnv:
    """The ``tldr-v1`` environment; see the module docstring for the arguments."""
    return make_writing_env(SPEC, "tldr", tldr_item, TLDR_V1_LEVELS, **kwargs)


def env(**kwargs: Any) -> CoopEnv:
    """The deprecated ``tldr-v0`` environment (no grounding, no complementarity); warns with the hole it has."""
    warn_deprecated(TLDR_V0_HOLE)
    return make_writing_env(SPEC, "tldr", tldr_item, TLDR_LEVELS, **kwargs)
