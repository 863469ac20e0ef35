"""The baselines' plumbing on the real HumanEval env and sandbox, with scripted replies (no model)."""

import itertools
import json

import pytest

from benchmarks.baselines import METHODS, ScriptedGenerator, get_method
from benchmarks.cli import eval_command
from benchmarks.evaluate import Entry, EvalConfig, evaluate

HELPER = "```python\ndef aux(a, b, threshold):\n    return abs(a - b) < threshold\n```"
MAIN = """```python
def has_close_elements(numbers, threshold):
    for i, a in enumerate(numbers):
        for b in numbers[i + 1:]:
            if aux(a, b, threshold):
                return True
    return False
```"""
WRONG_MAIN = "def has_close_elements(numbers, threshold):\n    return aux(numbers[0], numbers[-1], threshold)\n"
SOLO = MAIN.replace("aux(a, b, threshold)", "abs(a - b) < threshold")
CONFIG = dict(env="humaneval-v0", env_kwargs={"split": "test"}, task_ids=("HumanEval/0",), ks=(1, 2, 4))


def alternating_team():
    """main is right on every other call, so c = n / 2 per method."""
    flips = itertools.cycle([True, False])

    def script(prompt, agent):
        if agent == "helper":
            return HELPER
        if "helper agent" not in prompt:
            return SOLO
        return MAIN if next(flips) else WRONG_MAIN

    generator = ScriptedGenerator(script)
    return {"helper": generator, "main": generator}, generator


def test_all_methods_end_to_end():
    team, generator = alternating_team()
    entries = [Entry(name, get_method(name), team) for name in ("single", "concat", "sequential", "discussion", "env")]
    results = evaluate(EvalConfig(n=4, **CONFIG), entries)
    methods = results["methods"]
    assert methods["single"]["pass_at_k"] == {"1": 1.0, "2": 1.0, "4": 1.0}
    assert methods["concat"]["pass_at_k"]["1"] == pytest.approx(0.5)
    assert methods["concat"]["pass_at_k"]["2"] == pytest.approx(1 - 1 / 6)  # 1 - C(2,2)/C(4,2)
    assert methods["concat"]["schemes_of_solved"]["strategy_filter"] == 1.0
    assert methods["concat"]["cooperation_rate"] == 1.0
    assert methods["single"]["cooperation_rate"] == 0.0
    assert 0 < methods["concat"]["accuracy_at_k"]["1"] < 1
    assert methods["discussion"]["efficiency"]["tokens_per_episode"] > methods["concat"]["efficiency"]["tokens_per_episode"]
    episode = next(e for e in results["episodes"] if e["method"] == "discussion")
    assert episode["turns"] == 2 and episode["tests_total"] > 0
    # lockstep batching: one generator call per role per step, not one per episode
    assert max(size for _, size in generator.calls) == 4
    json.dumps(results)


def test_sequential_main_sees_helper_reply():
    seen = []

    def script(prompt, agent):
        seen.append((agent, HELPER.splitlines()[1] in prompt))
        return HELPER if agent == "helper" else MAIN

    generator = ScriptedGenerator(script)
    evaluate(EvalConfig(n=1, **CONFIG), [Entry("seq", get_method("sequential"), {"helper": generator, "main": generator})])
    assert seen == [("helper", False), ("main", True)]


def test_bad_inputs_are_explained():
    with pytest.raises(ValueError, match="Unknown method"):
        get_method("nope")
    with pytest.raises(ValueError, match="n \\(samples"):
        EvalConfig(env="humaneval-v0", n=0)
    team, _ = alternating_team()
    with pytest.raises(ValueError, match="Unknown task ids"):
        evaluate(EvalConfig(env="humaneval-v0", task_ids=("X/1",)), [Entry("concat", METHODS["concat"], team)])


def test_cli_writes_report(tmp_path, capsys):
    script = tmp_path / "replies.json"
    script.write_text(json.dumps({"helper": HELPER, "main": MAIN}))
    out = tmp_path / "out"
    code = eval_command(
        ["humaneval-v0", "--scripted", str(script), "-n", "2", "--ks", "1,2", "--task-ids", "HumanEval/0",
         "--methods", "concat,sequential", "--out", str(out), "-q"]
    )
    assert code == 0
    results = json.loads((out / "results.json").read_text())
    assert set(results["methods"]) == {"concat", "sequential"}
    assert results["methods"]["concat"]["pass_at_k"]["1"] == 1.0
    assert "llm-coop eval humaneval-v0" in results["command"]
    assert "| concat | 100.00% |" in (out / "results.md").read_text()
    assert (out / "pass_at_k.png").stat().st_size > 1000
    assert len((out / "episodes.jsonl").read_text().splitlines()) == 4
    assert eval_command(["humaneval-v0", "--methods", "bogus", "-q"]) == 2


def test_results_and_episodes_carry_the_provenance_record(tmp_path):
    import llm_coop_envs
    from benchmarks.reporting import write_report

    team, _ = alternating_team()
    results = evaluate(EvalConfig(n=1, **CONFIG), [Entry("concat", get_method("concat"), team)])
    write_report(results, tmp_path, "test")
    summary = json.loads((tmp_path / "results.json").read_text())
    episodes = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    for record in [summary["methods"]["concat"]["provenance"]] + [e["provenance"] for e in episodes]:
        assert record["package_version"] == llm_coop_envs.__version__
        assert record["env"] == {"id": "humaneval-v0", "kwargs": record["env"]["kwargs"]}
        assert record["env"]["kwargs"]["split"] == "test"
        assert record["model"]["label"] == "ScriptedGenerator (no model)" and "sampling" in record


def test_python_and_command_line_defaults_are_the_same():
    from benchmarks.cli import _ks, _parser, _sampling
    from benchmarks.evaluate import EVAL_SAMPLING

    args = _parser().parse_args([])
    python = EvalConfig(env=args.env)
    assert (args.n, tuple(_ks(args)), args.problems, args.batch_size, args.env_workers, args.seed, args.split) == (
        python.n, python.ks, python.problems, python.batch_size, python.env_workers, python.seed, python.split)
    assert _sampling(args) == EVAL_SAMPLING
    assert python.env_kwargs == {"split": "test"}  # held-out problems by default, as on the command line


def test_evaluate_prints_its_cost_and_shows_progress(capsys):
    from benchmarks.evaluate import CPU_TOKENS_PER_S
    from trainers.config import SamplingConfig

    class SampledScript(ScriptedGenerator):
        sampling = SamplingConfig(max_new_tokens=100)

    generator = SampledScript({"helper": HELPER, "main": MAIN})
    team = {"helper": generator, "main": generator}
    evaluate(EvalConfig(n=3, **CONFIG), [Entry("concat", get_method("concat"), team)])
    err = capsys.readouterr().err
    estimate = err.splitlines()[0]
    # 1 problem × 3 samples, 2 agents × 1 turn × 100 tokens
    assert "3 episodes" in estimate and "up to 6 replies" in estimate and "up to 600 generated tokens" in estimate
    assert f"~{CPU_TOKENS_PER_S} tokens/s" in estimate
    assert "3/3" in err  # the progress bar reached the end
    evaluate(EvalConfig(n=1, **CONFIG), [Entry("concat", get_method("concat"), team)], progress=False)
    assert capsys.readouterr().err == ""


def test_cooperation_is_read_from_the_code_the_env_ran():
    redefines = MAIN.replace("```python\n", "```python\ndef aux(a, b, threshold):\n    return False\n\n")
    generator = ScriptedGenerator(lambda prompt, agent: HELPER if agent == "helper" else redefines)
    results = evaluate(EvalConfig(n=1, **CONFIG), [Entry("env", get_method("env"), {"helper": generator, "main": generator})])
    [episode] = results["episodes"]
    # the env keeps the helper's aux and drops main's copy: the record holds the code that ran
    assert "def aux" in episode["code"]["helper"] and "def aux" not in episode["code"]["main"]
    assert episode["solved"] and episode["cooperates"] is True


def test_a_discussion_episode_records_what_a_reset_step_loop_sees():
    """The baselines play through the env package's runner; the record equals a plain loop's reading."""
    import llm_coop_envs
    from benchmarks.baselines.episodes import run_method

    helper = "```python\ndef aux(count):\n    return count * 3\n```"
    wrong = "```python\ndef total_ticket_cost(counts):\n    return sum(counts)\n```"
    right = "```python\ndef total_ticket_cost(counts):\n    return sum(aux(c) for c in counts)\n```"

    def script(prompt, agent):
        return helper if agent == "helper" else right if "--- Turn 2" in prompt else wrong

    method = get_method("discussion")
    env = llm_coop_envs.make("coop_basics-v0", split="test", tier=1, **method.env_overrides)
    generator = ScriptedGenerator(script)
    [record] = run_method(env, method, {"helper": generator, "main": generator}, [("coop_basics/t1/ticket_cost", 0)])

    observations, _ = env.reset(seed=0, options={"task_id": "coop_basics/t1/ticket_cost"})
    rewards_seen, tokens = [], 0
    while env.agents:
        actions = {agent: script(observations[agent], agent) for agent in env.agents}
        tokens += sum(len(text.split()) for text in actions.values())
        observations, rewards, _, _, infos = env.step(actions)
        rewards_seen.append(rewards["helper"])
    assert record.turns == 2 and record.reward == rewards_seen[-1] and record.episode_return == sum(rewards_seen)
    assert record.solved == infos["helper"]["solved"] is True and record.tests_passed == record.tests_total > 0
    assert record.replies == {"helper": helper, "main": right} and record.tokens == tokens and record.error == ""
    assert generator.calls == [("helper", 1), ("main", 1)] * 2
