"""Data by the package's rules (user files, Hub layout), splits, reward options and config validation."""

import json

import pytest

import llm_coop_envs
from llm_coop_envs.core import RewardResult
from llm_coop_envs.writing import TLDR_LEVELS, Band, LevelConfig, RewardWeights
from llm_coop_envs.writing.items import RowError, arxiv_item, tldr_item
from benchmarks.writing.genuine import TLDR_DETAILS

POST = "I adopted a shy rescue dog last month. She hides under the bed whenever guests come over and will not eat in front of them."
HUB_PROMPT = f"SUBREDDIT: r/dogs\n\nTITLE: My rescue dog hides from guests\n\nPOST: {POST}\n\nTL;DR:"


def write_jsonl(path, rows):
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    return path


def test_hub_layout_rows_are_parsed():
    item = tldr_item({"prompt": HUB_PROMPT, "completion": " Rescue dog hides from guests; how can I help her?"}, 7)
    assert item.source == POST and item.title == "My rescue dog hides from guests" and item.subreddit == "dogs"
    assert item.reference == "Rescue dog hides from guests; how can I help her?" and item.id == "tldr/7"


def test_local_layout_wins_over_the_prompt(tldr_task):
    item = tldr_task.items[0]
    assert item.id == "t3_1wbdsh" and item.subreddit == "relationships" and item.reference.startswith("I really like")


def test_user_jsonl_in_hub_layout_makes_a_working_env(tmp_path):
    rows = [{"prompt": HUB_PROMPT.replace("shy", f"shy ({i})"), "completion": " My rescue dog hides."} for i in range(5)]
    env = llm_coop_envs.make("tldr-v0", data_path=write_jsonl(tmp_path / "mine.jsonl", rows), split="all")
    observations, infos = env.reset(seed=0, options={"task_id": "tldr/3"})
    assert "shy (3)" in observations["tldr"] and "SUBREDDIT: r/dogs" in observations["detail"]
    _, rewards, *_ = env.step({"tldr": "My rescue dog hides.", "detail": "x"})
    assert rewards["tldr"] == 0.0  # detail too short: structure gate


def test_user_file_split_is_80_20(tmp_path):
    rows = [{"id": f"p{i}", "post": f"{POST} Day {i}.", "summary": "dog hides"} for i in range(10)]
    path = write_jsonl(tmp_path / "mine.jsonl", rows)
    assert len(llm_coop_envs.make("tldr-v0", data_path=path).task) == 8
    test = llm_coop_envs.make("tldr-v0", data_path=path, split="test").task
    assert [test.task_id(i) for i in range(len(test))] == ["p8", "p9"]


def test_shared_data_splits(tldr_task, arxiv_task):
    assert len(llm_coop_envs.make("tldr-v0").task) == 400 and len(llm_coop_envs.make("tldr-v0", split="test").task) == 100
    assert len(tldr_task) == 500 and len(arxiv_task) == 1132
    assert len(llm_coop_envs.make("arxiv_intro-v0", split="test").task) == 226


def test_arxiv_user_file_with_either_field_names(tmp_path):
    rows = [{"article_id": "a1", "abstract_text": "We study x."}, {"id": "b2", "abstract": "We  prove\ny.", "title": "On y"}]
    env = llm_coop_envs.make("arxiv_intro-v0", data_path=write_jsonl(tmp_path / "abs.jsonl", rows), split="all")
    observations, _ = env.reset(options={"task_id": "b2"})
    assert "Abstract: We prove y." in observations["background"] and "Title: On y" in observations["method"]
    assert arxiv_item({"abstract_text": "z"}, 4).id == "arxiv/4"


@pytest.mark.parametrize(
    "row,message",
    [({"title": "no post"}, "has no post"), ({"prompt": "not the tldr layout"}, "has no post")],
)
def test_rows_without_text_get_a_clear_error(row, message):
    with pytest.raises(RowError, match=message):
        tldr_item(row, 0)
    with pytest.raises(RowError, match="has no abstract"):
        arxiv_item({"title": "t"}, 0)


def test_duplicate_ids_are_rejected(tmp_path):
    path = write_jsonl(tmp_path / "dup.jsonl", [{"id": "same", "post": POST}, {"id": "same", "post": POST + " Again."}])
    with pytest.raises(RowError, match="appears twice"):
        llm_coop_envs.make("tldr-v0", data_path=path)


def test_custom_reward_callable_gets_replies_and_example():
    seen = {}

    def reward(replies, example):
        seen.update(replies=dict(replies), example=dict(example))
        return 0.25 * len(replies["detail"].split())

    env = llm_coop_envs.make("tldr-v0", split="all", reward=reward)
    env.reset(options={"task_id": "t3_43tag2"})
    _, rewards, _, _, infos = env.step({"tldr": "short", "detail": "four words right here"})
    assert rewards["tldr"] == 1.0 and infos["detail"]["reward_components"] == {"custom": 1.0}
    assert seen["example"]["task_id"] == "t3_43tag2" and seen["example"]["reference"].startswith("Joe told Mary")
    assert "Structure failed" in infos["tldr"]["feedback"]  # feedback still comes from the levels


def test_custom_reward_may_return_components_and_errors_name_the_task():
    env = llm_coop_envs.make("arxiv_intro-v0", split="test", reward=lambda r, e: RewardResult.from_components({"a": 1.0, "b": 2.0}))
    env.reset(seed=0)
    _, rewards, *_ = env.step({"background": "x", "method": "y"})
    assert rewards["method"] == 3.0
    broken = llm_coop_envs.make("arxiv_intro-v0", split="test", reward=lambda r, e: 1 / 0)
    broken.reset(seed=0, options={"index": 0})
    with pytest.raises(RuntimeError, match="reward function '<lambda>' raised ZeroDivisionError on task"):
        broken.step({"background": "x", "method": "y"})
    with pytest.raises(ValueError, match="use 'levels', a function f"):
        llm_coop_envs.make("tldr-v0", reward="rouge")


def test_reward_weights_scale_components(genuine):
    task, pairs = genuine["tldr"]
    env = llm_coop_envs.make("tldr-v0", split="all", reward_weights={"rouge": 0.0, "coherence": 2.0})
    env.reset(options={"task_id": "t3_2uzv26"})
    _, rewards, _, _, infos = env.step(dict(zip(task.agents, pairs["t3_2uzv26"])))
    assert infos["tldr"]["reward_components"] == {"structure": 1.0, "style": 1.0, "coherence": 2.0, "rouge": 0.0}
    assert rewards["tldr"] == 4.0
    assert env.task.config.length_ratio == TLDR_LEVELS.length_ratio


def test_reward_config_changes_thresholds(genuine):
    task, pairs = genuine["tldr"]
    strict = LevelConfig(first_words=(8, 100), second_words=(16, 300), length_ratio=Band(3.5, 4, 5, 6), overlap=Band(0, 0, 1, 1))
    env = llm_coop_envs.make("tldr-v0", split="all", reward_config=strict)
    env.reset(options={"task_id": "t3_2uzv26"})
    _, rewards, _, _, infos = env.step(dict(zip(task.agents, pairs["t3_2uzv26"])))
    assert infos["tldr"]["reward_components"]["structure"] == 0.5 and "accepted 3.50–6.00" in infos["tldr"]["feedback"]


@pytest.mark.parametrize(
    "build,message",
    [
        (lambda: Band(1.0, 0.5, 2.0, 3.0), "low <= ideal_low"),
        (lambda: RewardWeights(style=-1.0), "RewardWeights.style must be a finite number >= 0"),
        (lambda: RewardWeights.coerce({"clarity": 1.0}), "Unknown reward weight"),
        (lambda: TLDR_LEVELS.__class__(first_words=(10, 5), second_words=(1, 2), length_ratio=Band(0, 0, 1, 1), overlap=Band(0, 0, 1, 1)), "first_words"),
        (lambda: llm_coop_envs.make("tldr-v0", reward_config={"first_words": (1, 2)}), "reward_config must be a LevelConfig"),
    ],
)
def test_config_errors_say_how_to_fix(build, message):
    with pytest.raises((ValueError, TypeError), match=message):
        build()


def test_feedback_is_deterministic_and_reaches_the_next_turn(genuine):
    task, pairs = genuine["tldr"]
    env = llm_coop_envs.make("tldr-v0", split="all", num_turns=2)
    env.reset(options={"task_id": "t3_43tag2"})
    replies = {"tldr": pairs["t3_43tag2"][0], "detail": pairs["t3_43tag2"][0]}
    observations, _, terminations, _, infos = env.step(replies)
    feedback = infos["detail"]["feedback"]
    assert "length ratio detail/tldr = 1.00 words (ideal 1.60–3.20, accepted 1.10–5.00)" in feedback
    assert "Scoring stopped at the structure level" in feedback and feedback in observations["detail"]
    assert task.evaluate(0, replies).feedback == task.evaluate(0, replies).feedback
    assert not any(terminations.values())


def test_solved_pair_ends_the_episode_early(genuine):
    task, pairs = genuine["arxiv"]
    env = llm_coop_envs.make("arxiv_intro-v0", split="all", num_turns=3)
    env.reset(options={"task_id": "0704.0393"})
    _, rewards, terminations, _, infos = env.step(dict(zip(task.agents, pairs["0704.0393"])))
    assert rewards["method"] == 3.0 and infos["method"]["solved"] and all(terminations.values())


def test_prompts_state_roles_and_bounds(tldr_task, arxiv_task):
    assert "8–100 words" in tldr_task.prompt(0, "tldr") and "detailed summary" in tldr_task.prompt(0, "detail")
    background = arxiv_task.prompt(0, "background")
    assert "background and motivation" in background and arxiv_task.items[0].source in background
    assert "methods and implications" in arxiv_task.prompt(0, "method")


def test_genuine_pairs_exist_in_data(tldr_task):
    ids = {tldr_task.task_id(i) for i in range(len(tldr_task))}
    assert set(TLDR_DETAILS) <= ids
