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


def test_a_paraphrase_that_flips_a_fact_is_caught_and_an_honest_one_is_not():
    source = "My classmate is morbidly obese. She wants to study law. If only I wasn't busy, I could say hi to her."
    assert facts.contradicted_words("The poster's classmate in a weekly lab is not morbidly obese.", source)
    assert facts.contradicted_words("Her classmate refuses to study law next year.", source)  # wants -> refuses
    assert facts.contradicted_words("The classmate is morbidly obese and wants to study law.", source) == []
    # a hypothetical in the source ("if only ... could") is neither said nor denied
    assert facts.contradicted_words("The poster could not say hi to her while busy.", source) == []
    # "he'll" is not a word "hell", and a negation does not reach past a comma
    assert facts.polarity("if he doesn't get out, he'll be put to sleep") == ({"get"}, {"sleep", "put"}) or \
        "hell" not in set().union(*facts.polarity("if he doesn't get out, he'll be put to sleep"))
    assert facts.polarity("models with and without corrections")[0] == set()


def test_names_put_in_each_other_s_place_are_caught():
    source = "Mary asked her boyfriend Joe what he dislikes about her. Joe said Mary is nice."
    assert facts.swapped_names("Joe asked her boyfriend Mary what he dislikes.", source)
    assert facts.swapped_names("Mary asked her boyfriend Joe a question.", source) == []


def test_source_words_glued_in_source_order_are_found():
    source = ("The dog escaped from the yard today and animal control caught him. The family cannot pay the fee "
              "of one hundred and fifty dollars, so the shelter will put him to sleep next week unless someone helps.")
    glued = "Dog escaped with yard today, and animal control caught so family cannot pay with fee which shelter will put."
    share, count = facts.content_in_order(glued, source)
    assert share == 1.0 and count >= 12
    honest = "After a dog got out, the owners learned that a fee they cannot afford decides whether he lives."
    assert facts.content_in_order(honest, source)[0] < 0.9


def test_a_text_that_stops_on_an_article_or_a_preposition_trails_off():
    assert facts.trails_off("Above is a list of reasons why I want to become a")
    assert not facts.trails_off("She doesn't want him to") and not facts.trails_off("I care about her")
    assert not facts.trails_off("We broke up.") and not facts.trails_off("")


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
def tiny_lm(tiny_language_model):
    return tiny_language_model


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


def test_the_engine_reads_as_transformers_forward_does(tiny_lm):
    """The owned model's engine scores what transformers' forward (the fallback of other models) scores, with and
    without a shared source; a source's kept read is not changed by the texts scored after it."""
    context = "Write the letters a and b. Reply with many a letters and a few b letters.\n"
    requests = [(context, "def add(x, y):", " return x + y"), (context, "A", " b c d e f"),
                ("", "Problem 1:", " many a letters"), ("", "x", " abc def")]
    engine = LanguageModel(tiny_lm._spec)
    first = engine.score(requests)
    assert engine._engine is not None  # the tiny Llama runs on the owned module
    again = LanguageModel(tiny_lm._spec)
    one_by_one = again.score(requests[:1]) + again.score(requests[1:2])  # the second continues the same kept read
    fallback = LanguageModel(tiny_lm._spec)
    fallback._load()
    fallback._engine = None
    for a, b in list(zip(first, [*one_by_one, *first[2:]])) + list(zip(first, fallback.score(requests))):
        assert a.ends == b.ends and all(math.isclose(x, y, abs_tol=1e-5) for x, y in zip(a.logprobs, b.logprobs))


def test_one_row_scores_the_first_text_after_the_source_and_the_second_after_both(tiny_lm):
    from llm_coop_envs.writing.lm import prompts
    from llm_coop_envs.writing.lm_levels import model_scores

    pair = PairTexts(("tldr", "detail"), (" He is 23 and she is 20. ", "They met at work; she wants a non-profit job."),
                     SOURCE, "post")
    scores = model_scores(pair, LanguageModel(tiny_lm._spec))
    parts = prompts("post", SOURCE)
    context, closing = parts["context"], parts["closing"]
    first, second = (t.strip() for t in pair.texts)
    separate = LanguageModel(tiny_lm._spec).score(
        [("", closing, first), (context, closing, first), ("", closing, second), (context, closing, second),
         (context, closing + first + "\n\n" + closing, second)])
    for a, b in zip(scores, separate):
        assert a.ends == b.ends and all(math.isclose(x, y, abs_tol=1e-4) for x, y in zip(a.logprobs, b.logprobs))


def test_batches_pad_no_row_to_much_more_than_its_length():
    from llm_coop_envs.writing.lm import _chunks

    encoded = [([], [0] * n, []) for n in (10, 11, 12, 30, 31, 100)]
    chunks = _chunks(encoded, 16384)
    assert chunks == [[0, 1, 2], [3, 4], [5]]


def test_a_source_is_read_once_across_calls(tiny_lm):
    lm = LanguageModel(tiny_lm._spec)
    context = "The post: a long source text that several calls score texts after.\n"
    lm.score([(context, "A", " b c")])
    spent = lm.forward_tokens
    [again] = lm.score([(context, "A", " d e")])
    fresh = LanguageModel(tiny_lm._spec)
    [alone] = fresh.score([(context, "A", " d e")])
    assert lm.forward_tokens - spent < fresh.forward_tokens  # the context's tokens were not run again
    assert all(math.isclose(x, y, abs_tol=1e-4) for x, y in zip(again.logprobs, alone.logprobs))


def test_cached_requests_cost_no_forward_pass(tiny_lm):
    tiny_lm.score([("", "cache me", " please")])
    spent = tiny_lm.forward_tokens
    tiny_lm.score([("", "cache me", " please")])
    assert tiny_lm.forward_tokens == spent


def test_v3_env_runs_on_a_tiny_model_and_copies_share_it(tiny_lm, data_dir):
    import llm_coop_envs
    from llm_coop_envs.testing import check_env

    env = llm_coop_envs.make("tldr-v4", split="test", language_model=tiny_lm)
    check_env(env, quick=True)
    assert copy.deepcopy(env).task.lm is env.task.lm
    assert env.task.max_reward() == 7.0
    assert env.task.component_names() == ("structure", "fluency", "grounding", "consistency", "complementarity",
                                          "style", "coherence", "rouge")


def test_making_a_v3_env_does_not_import_torch(data_dir):
    code = ("import sys, llm_coop_envs; llm_coop_envs.make('tldr-v4', split='test'); "
            "llm_coop_envs.make('arxiv_intro-v4', split='test'); print('torch' in sys.modules)")
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


def test_the_cached_context_path_raises_no_deprecation_warning(tiny_lm):
    """The shared context hands its KV cache to the model under the installed transformers' own name
    (``llm_coop_envs.cache_api``), never the deprecated ``past_key_values``."""
    import warnings

    context = "Summarise the post.\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        LanguageModel(tiny_lm._spec).score([(context, "TL;DR:", " short"), (context, "Detail:", " longer text")])
