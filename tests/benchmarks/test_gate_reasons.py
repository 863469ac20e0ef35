"""The first failed level of a writing bench's held-out pairs, counted (no model: gated pairs only)."""

from benchmarks.writing import gate_reasons


def test_pairs_are_counted_by_their_first_failed_level_with_numbers_taken_out(data_dir, tiny_language_model):
    import llm_coop_envs

    item = llm_coop_envs.make("tldr-v4", split="test").task.items[0]
    looping = {"tldr": "A short and plain summary of what happened to the author.", "detail": "the same words " * 40}
    copying = {"tldr": item.source[:400], "detail": "The author explains at length what happened between them, why the breakup hurt so much, "
               "and how hard it is to see her every day in class."}
    records = [{"task_id": item.id, "replies": [{"tldr": "x", "detail": "y"}, looping]} for _ in range(2)]
    records.append({"task_id": item.id, "replies": [copying]})
    counts = gate_reasons.first_failures(records, "tldr-v4", language_model=tiny_language_model)
    assert sum(counts.values()) == 3 and not any(ch.isdigit() for message in counts for ch in message)
    assert len(counts) == 2 and any("detail text repeats itself" in m and counts[m] == 2 for m in counts)
    assert any("tldr text copies the post" in m and counts[m] == 1 for m in counts)


def test_each_text_s_failed_gates_are_counted_with_the_v4_credit(data_dir, tiny_language_model):
    import llm_coop_envs

    item = llm_coop_envs.make("tldr-v4", split="test").task.items[0]
    looping = {"tldr": "A short and plain summary of what happened to the author.", "detail": "the same words " * 40}
    records = [{"task_id": item.id, "replies": [looping]}] * 3
    failed, credits = gate_reasons.gate_failures(records, "tldr-v4", language_model=tiny_language_model)
    assert failed["detail"]["distinct"] == 3 and failed["tldr"]["(passes every gate)"] == 3
    assert len(credits) == 3 and all(0.15 < c < 0.3 for c in credits)


def test_recorded_rewards_are_set_beside_what_the_reward_pays_now(data_dir, tiny_language_model):
    import llm_coop_envs

    env = llm_coop_envs.make("tldr-v4", split="test", language_model=tiny_language_model)
    item = env.task.items[0]
    looping = {"tldr": "A short and plain summary of what happened to the author.", "detail": "the same words " * 40}
    paid = env.task.evaluate(0, looping).reward.total
    records = [{"task_id": item.id, "reward": 5.0, "replies": [looping]}, {"task_id": item.id, "reward": 3.0, "replies": [looping]}]
    recorded, now = gate_reasons.rescored(records, "tldr-v4", language_model=tiny_language_model)
    assert recorded == 4.0 and now == paid and 0.0 < now < 0.5
