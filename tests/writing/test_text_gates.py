"""Each text's own structure gates, and the ``-v4`` credit for the gates passed (no model: gated pairs only)."""

import warnings

import pytest

import llm_coop_envs
from llm_coop_envs.writing.text_gates import GATES, failed_gate_credit, text_gates
from tests.writing.conftest import index_of
from benchmarks.writing.genuine import TLDR_DETAILS

POST_ID = "t3_23za1b"


@pytest.fixture(scope="module")
def envs(data_dir, tiny_language_model):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return {v: llm_coop_envs.make(f"tldr-{v}", split="all", language_model=tiny_language_model) for v in ("v3", "v4")}


def _genuine(task):
    return {"tldr": task.items[index_of(task, POST_ID)].reference, "detail": TLDR_DETAILS[POST_ID]}


def _structure(env, replies):
    task = env.task
    score = task.score(index_of(task, POST_ID), replies)
    return score, score.level_scores()["structure"]


def test_a_genuine_pair_passes_every_gate_of_both_texts(envs):
    task = envs["v4"].task
    gates = text_gates(task.pair(index_of(task, POST_ID), _genuine(task)), task.config)
    assert set(gates) == {"tldr", "detail"}
    assert all(tuple(passed) == GATES and all(passed.values()) for passed in gates.values())


@pytest.mark.parametrize("detail,gate", [
    ("the same words " * 40, "distinct"),
    (TLDR_DETAILS[POST_ID].rstrip(".") + " and because of", "finished"),
    ("However, " + TLDR_DETAILS[POST_ID], "opening"),
])
def test_each_gate_is_found_on_its_own_text(envs, detail, gate):
    task = envs["v4"].task
    replies = {**_genuine(task), "detail": detail}
    gates = text_gates(task.pair(index_of(task, POST_ID), replies), task.config)
    assert all(gates["tldr"].values())
    assert not gates["detail"][gate]


def _opening_then_a_loop(task) -> str:
    """What a MAGRPO run on the first build of ``-v4`` found paid 6.3 of 7: the post's opening, then one
    sentence said again and again with a number changed (distinct words and sentence frames stay in bounds)."""
    post = task.items[index_of(task, POST_ID)].source
    loop = " ".join(f"I have read chapter {k} of the post and I still do not know what to do about my own plans."
                    for k in range(1, 6))
    return " ".join(post.split()[:60]) + " " + loop


def test_a_detail_that_loops_on_a_sentence_fails_the_repeats_gate_on_v4_only(envs):
    task4, task3 = envs["v4"].task, envs["v3"].task
    replies = {**_genuine(task4), "detail": _opening_then_a_loop(task4)}
    gates4 = text_gates(task4.pair(index_of(task4, POST_ID), replies), task4.config)
    assert not gates4["detail"]["repeats"] and gates4["tldr"]["repeats"]
    assert gates4["detail"]["distinct"] and gates4["detail"]["template"], "the older loop checks let it through"
    score4, _ = _structure(envs["v4"], replies)
    assert not score4.gates_passed and "repeats itself" in score4.levels[0].message
    assert score4.metrics["repeated_share"]["detail"] > 0.3 >= score4.metrics["repeated_share"]["tldr"]
    assert text_gates(task3.pair(index_of(task3, POST_ID), replies), task3.config)["detail"]["repeats"], "-v3 does not check"


def test_the_repeated_phrase_share():
    from llm_coop_envs.writing.text_metrics import repeated_phrase_share, words

    assert repeated_phrase_share([], 8) == 0.0 == repeated_phrase_share(words("one two three"), 8)
    prose = words("Each of these words appears once, so no phrase of eight words can come back in this sentence.")
    assert repeated_phrase_share(prose, 8) == 0.0
    sentence = "we should all go to the lake together on sunday"
    assert repeated_phrase_share(words(f"{sentence} and then {sentence}"), 8) == pytest.approx(20 / 22)
    assert repeated_phrase_share(words("a b c d e f g h x a b c d e f g h"), 8) == pytest.approx(16 / 17)


def test_v4_pays_a_credit_below_any_passing_pair_where_v3_pays_nothing(envs):
    task = envs["v4"].task
    looping = {**_genuine(task), "detail": "the same words " * 40}
    score3, structure3 = _structure(envs["v3"], looping)
    score4, structure4 = _structure(envs["v4"], looping)
    assert structure3 == 0.0 and not score3.gates_passed
    # the TL;DR passes its gates (0.1, plus up to 0.1 as far as the post explains it), the detail most of its own
    assert 0.15 < structure4 < 0.3 and not score4.gates_passed and not score4.levels[0].passed
    assert len(score4.levels) == 1, "scoring still stops at a failed gate"
    assert "distinct" in score4.metrics["gates_failed"]["detail"] and not score4.metrics["gates_failed"]["tldr"]
    assert set(score4.metrics["credit_pmi"]) == {"tldr"}, "the model reads only the text that passes its gates"
    assert "Credit" in score4.levels[0].message and "detail: distinct" in score4.levels[0].message


def test_fewer_failed_gates_earn_more_and_the_credit_stays_below_the_ratio_failure():
    passing = dict.fromkeys(GATES, True)
    one_off = {**passing, "copy": False}
    two_off = {**one_off, "finished": False}
    grounded = {"a": 1.0}
    credit = [failed_gate_credit({"a": a, "b": b}, 0.4, grounded) for a, b in
              [(passing, one_off), (passing, two_off), (one_off, two_off), (two_off, two_off)]]
    assert credit == sorted(credit, reverse=True) and len(set(credit)) == 4
    assert max(credit) < 0.4 < 0.5
    assert failed_gate_credit({"a": dict.fromkeys(GATES, False), "b": dict.fromkeys(GATES, False)}, 0.4, {}) == 0.0


def test_a_text_that_passes_its_gates_earns_its_second_half_only_for_being_about_the_source():
    passing, one_off = dict.fromkeys(GATES, True), {**dict.fromkeys(GATES, True), "copy": False}
    on_source = failed_gate_credit({"a": passing, "b": one_off}, 0.4, {"a": 1.0})
    about_nothing = failed_gate_credit({"a": passing, "b": one_off}, 0.4, {"a": 0.0})
    copying = failed_gate_credit({"a": one_off, "b": one_off}, 0.4, {})
    assert on_source - about_nothing == pytest.approx(0.1)
    assert on_source > about_nothing > copying


def test_v4_reads_a_generic_text_as_about_nothing(data_dir):
    """With the real model: a fluent comment on "the post" that passes every gate earns about half of its
    text's credit, the author's TL;DR all of it (skipped without the default model on disk)."""
    pytest.importorskip("torch")
    from llm_coop_envs.lm.cache import default_model_path, is_pulled

    if not is_pulled(default_model_path()):
        pytest.skip("the default model is not on this machine (llm-coop pull-model)")
    env = llm_coop_envs.make("tldr-v4", split="test")
    task, index = env.task, 0
    looping = "the same words " * 40
    generic = ("This is a detailed and concise summary of a Reddit post. The post includes a clear explanation of "
               "its content and the details of its title.")
    scores = {name: task.score(index, {"tldr": tldr, "detail": looping}) for name, tldr in
              [("author", task.items[index].reference), ("generic", generic)]}
    pmi = {name: score.metrics["credit_pmi"]["tldr"] for name, score in scores.items()}
    assert pmi["author"] > 0.45 and pmi["generic"] < 0.25, pmi
    assert scores["author"].level_scores()["structure"] > scores["generic"].level_scores()["structure"] + 0.05


@pytest.mark.parametrize("env_id,name", [("tldr-v4", "tldr"), ("arxiv_intro-v4", "arxiv")])
def test_a_pair_fails_its_structure_gates_exactly_when_a_text_fails_one_of_its_own(data_dir, tiny_language_model,
                                                                                     env_id, name):
    """The pair's gates (which stop at the first kind, for the message) and each text's gates (all of them,
    for the credit) are two readings of one set of checks: they must agree on every hostile family."""
    from benchmarks.writing import hostile

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        task = llm_coop_envs.make(env_id, split="all", language_model=tiny_language_model).task
    for task_id, case in hostile.cases(name, task)[:2]:
        families = {"genuine": case.genuine, **{family: build(case) for family, build in hostile.FAMILIES.items()
                                                if hostile.ONLY.get(family, name) == name}}
        for family, texts in families.items():
            if texts is None:  # a family with nothing to change on this source
                continue
            replies = dict(zip(task.agents, texts))
            gates = text_gates(task.pair(index_of(task, task_id), replies), task.config)
            some_text_fails = not all(all(passed.values()) for passed in gates.values())
            assert task.score(index_of(task, task_id), replies).gated == some_text_fails, (task_id, family, gates)


def test_per_agent_rewards_give_the_passed_gates_credit_only_to_a_text_that_passes_all_its_gates(envs):
    """A looping detail passes the word-level gates that ``-v2``'s per-agent split checks; on ``-v4`` it
    fails its own gates and keeps only the pair's credit, while the TL;DR keeps the passed gates' 0.5."""
    import copy

    task = copy.copy(envs["v4"].task)
    task.reward_mode = "per_agent"
    replies = {**_genuine(task), "detail": _opening_then_a_loop(task)}
    evaluation = task.evaluate(index_of(task, POST_ID), replies)
    joint, own = evaluation.reward, evaluation.agent_rewards
    assert 0.0 < joint.total < 0.4
    assert own["tldr"].components["structure"] == pytest.approx(0.5 * task.config.weights.structure)
    assert own["detail"].components["structure"] == pytest.approx(joint.components["structure"])
