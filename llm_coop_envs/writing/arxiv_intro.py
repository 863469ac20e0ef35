"""# arXiv introduction (`arxiv_intro-v5`)

Two writers expand one arXiv abstract into an introduction: `background` writes the background
and motivation paragraph(s), `method` writes the methods and implications part. Both see the
abstract; neither sees the other's text in the first turn.

```python
import llm_coop_envs
env = llm_coop_envs.make("arxiv_intro-v5", split="train")  # 0704.0460 is a training problem
observations, infos = env.reset(seed=0, options={"task_id": "0704.0460"})
observations, rewards, terminations, truncations, infos = env.step({"background": "...", "method": "..."})
```

| | |
|---|---|
| Agents | `background`, `method` (in this order in the sequential protocol) |
| Observation space | `UnicodeText`: the prompt (title and abstract), later turns add the agent's previous reply and feedback |
| Action space | `UnicodeText`: any string (capped at `max_reply_chars`) |
| Reward | joint, the same for both agents; levels below, maximum 7.0 (8.0 with a grader) |
| Data | `OpenMLRL/arXiv_abstract` on the Hub (`article_id`, `abstract_text`), offline `arxiv_abstracts.jsonl` (1,132 abstracts with `id`, `title`, `abstract`) |
| Problem ids | the arXiv id (`0704.0460`); rows without an id: `arxiv/<row position>` |
| Needs | torch and transformers (`pip install 'llm-coop-envs[train]'`) and the default model on disk (`llm-coop pull-model`): a small language model reads the texts; the `claims` extra (`pip install 'llm-coop-envs[claims]'`) checks their claims |

## Reward (`reward="levels"`)

Gated levels, run in order; **a failed level stops the scoring** (later levels score 0). Each scores
in [0, 1] times its weight (`reward_weights`, default 1 each); the total is the sum of the
components, which `infos[agent]["reward_components"]` lists as `structure`, `fluency`, `grounding`,
`consistency`, `complementarity`, `style`, `coherence` (and `grader`). The levels are those of
[`tldr-v5`](tldr.md) (`llm_coop_envs.writing.chain`), read for this task's roles; both texts and the
abstract are normalised once before every gate, the claim check and the model:

1. **structure**: each text's own gates, as in [`tldr-v5`](tldr.md) (invisible characters, copying,
   loops, the sentence order, both texts ending in a finished sentence, and each text's job: no
   chat-template tag, filler line or retraction, a retelling rather than advice, a review or the task
   restated), then the length ratio words(`method`) / words(`background`) (similar length). A pair
   that fails a gate still earns a small credit for the gates its texts pass;
2. **fluency**: each text's mean log-probability per token under the model, in a band (and a `method`
   text running against the abstract's order that reads better reversed fails);
3. **grounding**: the pointwise mutual information of each text with the abstract (title included),
   per token, in a band, at most a share of a text's sentences gaining nothing from the abstract, and
   the **roles by halves**: each half of the `method` text must be explained by the abstract about as
   much as the better-explained half of the `background` text or more (the background brings context
   throughout, the methods part reports the abstract throughout; crossed halves fail);
4. **consistency**: the claims of both texts against the abstract's ([Claims against the source](claims.md)):
   a fifth of the level per contradicted claim, a small capped share per unsupported one; a disagreement
   never stops the chain (a background that brings the field's context makes unsupported claims: they
   cost little);
5. **complementarity**: what the `background` text explains of the `method` text (a restatement
   fails), times the role gap: the abstract must explain the `method` text at least as much as the
   `background` text (PMI(method) − PMI(background) ≥ 0 for full credit; swapped roles fail);
6. **style consistency** and 7. **coherence** (transition phrases): as in `-v2`;
8. **grader** (optional, off by default).

The word-level thresholds are in [Writing tasks: reward levels](writing.md#reward-levels); the
language-model thresholds, their calibration and the hostile-reply table below this page's version
history ([Calibration of the `-v3` levels](#calibration-of-the-v3-levels)).

`solved` (which ends a multi-turn episode early when `stop_when_solved`) means levels 1–7 at
full credit. `infos[agent]["feedback"]` names the failed level and the numbers;
`infos[agent]["details"]` holds the raw measurements.

## Arguments

| argument | default | meaning |
|---|---|---|
| `split` | `"train"` | `"train"` (rows 0–905), `"test"` (rows 906–1131) or `"all"`; a user's file: first 80 % / rest |
| `data_path` | `None` | a JSON or JSON Lines file of rows with `abstract_text` (or `abstract`), optional `article_id` (or `id`) and `title` |
| `reward` | `"levels"` | or a function `f(replies, context)`, alone or in a weighted list with `"levels"`: see [Custom rewards](rewards.md) |
| `reward_config` | `ARXIV_V5_LEVELS` | a `LevelConfig` with every threshold of the levels (`llm_coop_envs.writing.thresholds`) |
| `reward_weights` | all 1.0 | a `RewardWeights` or a dict such as `{"coherence": 0.5}` |
| `reward_mode` | `"joint"` | `"per_agent"`: each role also gets its own reward where the levels separate (docs: writing tasks, per-agent rewards) |
| `grader` | `None` | a dict of `GraderConfig` options or a `WritingGrader` (see `tldr-v5`) |
| `claims_judge` | `None` | an outside judge of the claims (see `tldr-v5`); off: the offline parser reads them |
| `language_model` | `None` | the scoring model of the `-v3` levels (see `tldr-v5`) |
| other | | passed to `CoopEnv`: `num_turns`, `feedback`, `protocol`, `share_replies`, `stop_when_solved`, `max_reply_chars`, `render_mode` |

With a custom reward, `solved`, feedback and `details` still come from the levels
(`details["level_reward"]` is the level total).

## Version history

- v5: v4 with the text normalised once, the gates of each text's job and consistency read from claims
  against the abstract, as `tldr-v5`; either text cut mid-sentence is read up to its last finished
  sentence at half the reward. Maximum 7.0. Made by `llm_coop_envs.writing.arxiv_intro.env`.
- v4 (deprecated; `make("arxiv_intro-v4")` warns): v3, and a pair that fails a structure gate earns a credit for the gates each text passes, and
  for a text that passes them all, for being about the abstract (at most 0.4 of the structure level's
  1.0), instead of 0, as `tldr-v4`. Every pair that passes the gates scores as on v3. Maximum 7.0.
  Made by `llm_coop_envs.writing.arxiv_intro.env_v4`. Its hole: as `tldr-v4`'s (facts not read, text
  not normalised, a text's job not checked, one false alarm stops the chain).
- v3 (deprecated; `make("arxiv_intro-v3")` warns): a language model reads the texts (fluency, grounding by pointwise mutual information with the
  abstract, complementarity by what the background explains of the methods part, the role gap by
  PMI); consistency checks of numbers, names and negations; look-alike letters mapped before the
  copy gates, templated and unfinished texts rejected, sentences split at `;` and `:` for the order
  check. Maximum 7.0. Made by `llm_coop_envs.writing.arxiv_intro.env_v3`. Changed in place before any
  result cited its scores: the order check and two new gates run before the model, the roles are
  checked by halves in grounding (crossed halves kept 81 % of the genuine reward), consistency also
  sees flipped paraphrases, swapped names and stacked negations and scales the later levels.
  Later, also in place: consistency flags a negation that denies a plain statement of the source
  (`denied_statements`); no genuine pair and none of the dataset's TL;DRs changes score, and the one
  cited run (`benchmarks/results/learning/tldr-v3`) is gated before consistency, so unchanged.
  Its hole: a pair that fails any structure gate earns 0, so when every sample of a group fails one
  (MAGRPO's untrained samples on `tldr-v3`: 64 of 64 training pairs) the trainer learns nothing.
- v2 (deprecated; `make("arxiv_intro-v2")` warns): v1 plus the sentence-order check in the coherence level; honest pairs in order score as on
  v1. Made by `llm_coop_envs.writing.arxiv_intro.env_v2`. Its hole: it scores words, not meaning: a
  pair with its numbers, names and negations corrupted keeps all of the genuine reward, the methods
  part's sentences reversed and joined with `;` 82 %, the parts' second halves crossed 77 %.
- v1 (deprecated; `make("arxiv_intro-v1")` warns): adds what v0 lacked, a check that the texts are about their own abstract: the function-word
  and in-order copy gates, grounding (which also scales the later levels) and complementarity
  scored from the abstract. Maximum 5.0. Made by `llm_coop_envs.writing.arxiv_intro.env_v1`. Its hole: sentence order
  is not checked, so the sentences of a good pair shuffled within each text keep 98–100 % of its reward.
- v0 (deprecated; `make("arxiv_intro-v0")` warns): levels structure, style, coherence, maximum
  3.0. Its hole: the abstract is read only to forbid copying, so one fixed pair of fluent, generic
  paragraphs scores about 2.3–2.9 of 3.0 on every abstract, and a good pair written for another
  abstract scores the full 3.0. It followed the MAGRPO paper's gated levels and fixed its
  weaknesses: the paper's length-ratio band (documented as 1.0–1.3, coded as 1.3–1.6) is replaced
  by a symmetric "similar length" band in words; transitions are matched as whole words, without
  ambiguous words ("as", "if", "so", "then"); vocabulary overlap is scored in a band, so repetition
  is penalised; degenerate and copied texts fail; parts of 80–300 words (the paper: 128–256).
"""

from __future__ import annotations

from llm_coop_envs.writing.factory import v4_hole, version_env
from llm_coop_envs.writing.items import arxiv_item
from llm_coop_envs.writing.prompts import background_prompt, method_prompt
from llm_coop_envs.writing.task import WritingSpec
from llm_coop_envs.writing.thresholds import (
    ARXIV_LEVELS, ARXIV_V1_LEVELS, ARXIV_V2_LEVELS, ARXIV_V3_LEVELS, ARXIV_V4_LEVELS,
    ARXIV_V5_LEVELS,
)

SPEC = WritingSpec(
    name="arxiv_intro",
    agents=("background", "method"),
    source_name="abstract",
    prompts={"background": background_prompt, "method": method_prompt},
    uses_reference=False,
    description=(
        "Two writers expand an arXiv abstract into an introduction: `background` writes the background and "
        "motivation (the field, the open problem, why it matters), `method` the methods, findings and implications."
    ),
)


ARXIV_V0_HOLE = (
    "arxiv_intro-v0 does not check that the texts are about their abstract (it reads the abstract only to "
    "forbid copying): one fixed pair of fluent, generic paragraphs scores nearly full marks on every "
    "abstract."
)


ARXIV_V1_HOLE = (
    "arxiv_intro-v1 does not check sentence order: the sentences of a good pair shuffled within each text keep "
    "98-100 % of its reward, and shuffled across the two texts up to all of it."
)


ARXIV_V2_HOLE = (
    "arxiv_intro-v2 scores words, not meaning: a pair with its numbers, names and negations corrupted keeps all of "
    "the genuine reward, the methods part's sentences reversed and joined with ';' 82 % (all of it on some "
    "abstracts), the two parts' second halves crossed 77 %."
)


ARXIV_V3_HOLE = (
    "arxiv_intro-v3 pays nothing for a pair that fails any structure gate: when every sample of a group fails one (MAGRPO's "
    "untrained samples on tldr-v3: 64 of 64 training pairs), the trainer gets no signal to learn from."
)


ARXIV_V4_HOLE = v4_hole("arxiv_intro-v4", "abstract")


CURRENT = "arxiv_intro-v5"
"""The current version's id: what ``env`` builds and what the older versions' warnings point to."""

VERSION_LEVELS = {"arxiv_intro-v0": ARXIV_LEVELS, "arxiv_intro-v1": ARXIV_V1_LEVELS, "arxiv_intro-v2": ARXIV_V2_LEVELS, "arxiv_intro-v3": ARXIV_V3_LEVELS, "arxiv_intro-v4": ARXIV_V4_LEVELS, CURRENT: ARXIV_V5_LEVELS}
"""Each version's default thresholds (the docs' table of every threshold is generated from these)."""


env = version_env(SPEC, "arxiv_abstracts", arxiv_item, VERSION_LEVELS[CURRENT],
                  "The ``arxiv_intro-v5`` environment; see the module docstring for the arguments.")
env_v4 = version_env(SPEC, "arxiv_abstracts", arxiv_item, VERSION_LEVELS["arxiv_intro-v4"],
                     "The deprecated ``arxiv_intro-v4`` environment (facts not read, text not normalised); warns with its hole.", ARXIV_V4_HOLE, CURRENT)
env_v3 = version_env(SPEC, "arxiv_abstracts", arxiv_item, VERSION_LEVELS["arxiv_intro-v3"],
                     "The deprecated ``arxiv_intro-v3`` environment (a failed gate pays nothing); warns with its hole.", ARXIV_V3_HOLE, CURRENT)
env_v2 = version_env(SPEC, "arxiv_abstracts", arxiv_item, VERSION_LEVELS["arxiv_intro-v2"],
                     "The deprecated ``arxiv_intro-v2`` environment (word-level reward); warns with its hole.", ARXIV_V2_HOLE, CURRENT)
env_v1 = version_env(SPEC, "arxiv_abstracts", arxiv_item, VERSION_LEVELS["arxiv_intro-v1"],
                     "The deprecated ``arxiv_intro-v1`` environment (sentence order not checked); warns with its hole.", ARXIV_V1_HOLE, CURRENT)
env_v0 = version_env(SPEC, "arxiv_abstracts", arxiv_item, VERSION_LEVELS["arxiv_intro-v0"],
                     "The deprecated ``arxiv_intro-v0`` environment (no grounding, no complementarity); warns with its hole.", ARXIV_V0_HOLE, CURRENT)
