"""The ``-v3`` writing reward: exact checks, the scoring math, and the language model (a tiny random one here)."""

import copy
import math
import subprocess
import sys
import warnings

import pytest

from llm_coop_envs.writing import facts
from llm_coop_envs.writing.lm import LanguageModel, LanguageModelUnavailable, TokenScores
from llm_coop_envs.writing.lm_levels import grounding_level, off_source_share, sentence_spans
from llm_coop_envs.writing.reward import PairTexts
from llm_coop_envs.writing.thresholds import TLDR_V3_LEVELS

SOURCE = ("Me: 23 year old male with a job at Acme. Her: 20 year old female who wants to work for a non-profit. "
          "She does not like money. We have been together for 2.5 years.")


# --- exact checks (no model) ---------------------------------------------------------------------

def test_skeleton_maps_look_alike_letters_and_mixed_words_are_found():
    disguised = "thе pаper"  # Cyrillic е and а
    assert facts.skeleton(disguised) == "the paper"
    assert facts.mixed_script_words(disguised) == ["thе", "pаper"]
    assert facts.mixed_script_words("Москва and Zürich") == []


def test_numbers_must_be_stated_by_the_source():
    assert facts.unknown_numbers("He is 23 and she is 20; together 2.5 years.", SOURCE) == []
    assert facts.unknown_numbers("He is 47 and they met 5.5 years ago.", SOURCE) == ["47", "5.5"]


def test_names_must_occur_in_the_source():
    assert facts.unknown_names("He works at Acme and she does not.", SOURCE) == []
    assert facts.unknown_names("He works at Globex and she does not.", SOURCE) == ["Globex"]


def test_a_flipped_negation_or_an_opposite_word_is_caught_and_a_paraphrase_is_not():
    assert facts.flipped_statements("Her: a 20 year old female who does not want to work for a non-profit.", SOURCE)
    assert facts.flipped_statements("She wants to work for a non-profit and does not like money.", SOURCE) == []
    assert facts.flipped_statements("Him: 23 year old female with a job at Acme.", SOURCE)  # male -> female


def test_templates_and_unfinished_texts():
    frame = "\n".join(f"- The post explains how the {a} affects the {b}." for a, b in [("job", "money"), ("age", "work"), ("love", "plans")])
    assert facts.templated_share(frame) == 1.0
    assert facts.templated_share("He works hard. She wants to help others. They disagree about money.") < 0.5
    assert facts.unfinished("He works at Acme and she") and not facts.unfinished('She said "no."')


# --- the scoring math on hand-made token scores --------------------------------------------------

def _scores(values, text):
    ends = [round(len(text) * (k + 1) / len(values)) for k in range(len(values))]
    return TokenScores(tuple(values), tuple(ends))


def test_pmi_is_the_per_token_gain_from_the_source():
    texts = ("One two three. Four five six.", "Seven eight nine. Ten eleven twelve.")
    plain = [_scores([-4.0] * 6, texts[0]), _scores([-4.0] * 6, texts[1])]
    given = [_scores([-3.0] * 6, texts[0]), _scores([-3.5] * 6, texts[1])]
    pair = PairTexts(("tldr", "detail"), texts, SOURCE, "post")
    metrics = {}
    outcome = grounding_level(pair, [plain[0], given[0], plain[1], given[1]], TLDR_V3_LEVELS.lm, metrics)
    assert metrics["pmi"] == {"tldr": 1.0, "detail": 0.5}
    assert outcome.passed and outcome.score == TLDR_V3_LEVELS.lm.pmi.score(1.0)
    copied = [_scores([-3.0] * 6, texts[0]), _scores([-1.0] * 6, texts[0]), _scores([-3.0] * 6, texts[1]),
              _scores([-1.0] * 6, texts[1])]
    assert not grounding_level(pair, copied, TLDR_V3_LEVELS.lm, {}).passed  # both gain 2 nats a token: a copy


def test_off_source_share_counts_the_tokens_of_sentences_that_gain_nothing():
    text = "On the source. Appended text."
    spans = sentence_spans(text)
    assert [text[a:b].strip() for a, b in spans] == ["On the source.", "Appended text."]
    plain = TokenScores((-3.0, -3.0, -3.0, -3.0), (6, 14, 23, 29))
    given = TokenScores((-1.0, -1.0, -3.0, -3.0), (6, 14, 23, 29))
    assert off_source_share(plain, given, text, 0.05) == 0.5


# --- the model -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny_lm():
    pytest.importorskip("torch")
    from tests.trainers.conftest import build_model, build_tokenizer

    tokenizer = build_tokenizer()
    return LanguageModel((build_model(tokenizer), tokenizer))


def test_token_scores_match_a_direct_computation(tiny_lm):
    import torch

    prefix, text = "Write the letters a and b.", " add(x, y) helper"
    [scores] = tiny_lm.score([("", prefix, text)])
    model, tokenizer = tiny_lm._model, tiny_lm._tokenizer
    p = tokenizer(prefix, add_special_tokens=False)["input_ids"]
    t = tokenizer(text, add_special_tokens=False)["input_ids"]
    with torch.inference_mode():
        logits = model(torch.tensor([p + t])).logits[0]
    expected = [torch.log_softmax(logits[len(p) + k - 1], -1)[t[k]].item() for k in range(len(t))]
    assert len(scores) == len(t) and all(math.isclose(a, b, abs_tol=1e-4) for a, b in zip(scores.logprobs, expected))
    assert scores.ends[-1] == len(text)


def test_a_padded_batch_scores_like_single_requests(tiny_lm):
    requests = [("", "Problem 1:", " many a letters"), ("", "A much longer prefix with more words in it:", " b"),
                ("", "x", " abc def")]
    together = LanguageModel(tiny_lm._spec).score(requests)
    alone = [LanguageModel(tiny_lm._spec).score([r])[0] for r in requests]
    for a, b in zip(together, alone):
        assert len(a) == len(b) and all(math.isclose(x, y, abs_tol=1e-4) for x, y in zip(a.logprobs, b.logprobs))


def test_a_shared_context_scores_like_the_context_written_out(tiny_lm):
    context = "Write the letters a and b. Reply with many a letters and a few b letters.\n"
    shared = [(context, "def add(x, y):", " return x + y"), (context, "A", " b c d e f"), (context, "helper", " main")]
    spelled = [("", context + prefix, text) for _, prefix, text in shared]
    for a, b in zip(LanguageModel(tiny_lm._spec).score(shared), LanguageModel(tiny_lm._spec).score(spelled)):
        assert len(a) == len(b) and all(math.isclose(x, y, abs_tol=1e-4) for x, y in zip(a.logprobs, b.logprobs))
    assert copy.deepcopy(tiny_lm) is tiny_lm


def test_cached_requests_cost_no_forward_pass(tiny_lm):
    tiny_lm.score([("", "cache me", " please")])
    spent = tiny_lm.forward_tokens
    tiny_lm.score([("", "cache me", " please")])
    assert tiny_lm.forward_tokens == spent


def test_v3_env_runs_on_a_tiny_model_and_copies_share_it(tiny_lm, data_dir):
    import llm_coop_envs
    from llm_coop_envs.testing import check_env

    env = llm_coop_envs.make("tldr-v3", split="test", language_model=tiny_lm)
    check_env(env, quick=True)
    assert copy.deepcopy(env).task.lm is env.task.lm
    assert env.task.max_reward() == 7.0
    assert env.task.component_names() == ("structure", "fluency", "grounding", "consistency", "complementarity",
                                          "style", "coherence", "rouge")


def test_making_a_v3_env_does_not_import_torch(data_dir):
    code = ("import sys, llm_coop_envs; llm_coop_envs.make('tldr-v3', split='test'); "
            "llm_coop_envs.make('arxiv_intro-v3', split='test'); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_without_torch_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(LanguageModelUnavailable, match=r"llm-coop-envs\[train\]"):
        LanguageModel("default").score([("", "a", "b")])


def test_without_the_model_file_the_error_says_how_to_get_it(monkeypatch, tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    monkeypatch.setenv("LLM_COOP_CACHE", str(tmp_path))
    with pytest.raises(LanguageModelUnavailable, match="pull-model"):
        LanguageModel("default").score([("", "a", "b")])


def test_v2_is_deprecated_with_its_hole(data_dir):
    import llm_coop_envs

    for env_id in ("tldr-v2", "arxiv_intro-v2"):
        with pytest.warns(FutureWarning, match="negations corrupted"):
            llm_coop_envs.make(env_id, split="test")


def test_language_model_is_refused_before_v3(data_dir):
    import llm_coop_envs

    with warnings.catch_warnings(), pytest.raises(ValueError, match="-v3"):
        warnings.simplefilter("ignore", FutureWarning)
        llm_coop_envs.make("tldr-v2", split="test", language_model="default")
