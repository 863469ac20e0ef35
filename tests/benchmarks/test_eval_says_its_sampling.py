"""``llm-coop eval`` says how its replies were drawn, beside the table, since the trainer's held-out
evaluation of the same checkpoint is greedy and its numbers differ."""

import json

from benchmarks.baselines import ScriptedGenerator, get_method
from benchmarks.cli import eval_command
from benchmarks.evaluate import Entry, EvalConfig, evaluate
from benchmarks.reporting import write_report
from trainers.config import SamplingConfig

REPLIES = {"helper": "def aux(x):\n    return x", "main": "pass"}


def report(tmp_path, temperature: float) -> str:
    class Sampled(ScriptedGenerator):
        sampling = SamplingConfig(temperature=temperature, top_p=0.95, max_new_tokens=64)

    team = dict.fromkeys(("helper", "main"), Sampled(REPLIES))
    results = evaluate(EvalConfig(env="coop_basics-v1", problems=1, n=1, ks=(1,)), [Entry("env", get_method("env"), team)],
                       progress=False)
    write_report(results, tmp_path / str(temperature), "test")
    return (tmp_path / str(temperature) / "results.md").read_text(encoding="utf-8")


def test_results_say_sampled_or_greedy(tmp_path):
    sampled = report(tmp_path, 0.8)
    assert "Sampling: sampled at temperature 0.8, top-p 0.95, at most 64 new tokens." in sampled
    assert "The trainer's held-out evaluation of a checkpoint is greedy" in sampled
    greedy = report(tmp_path, 0.0)
    assert "Sampling: greedy (temperature 0), at most 64 new tokens." in greedy
    assert "trainer" not in greedy


def test_the_command_prints_its_sampling_under_the_table(tmp_path, capsys):
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(REPLIES), encoding="utf-8")
    argv = ["coop_basics-v1", "--scripted", str(script), "--methods", "env", "-n", "1", "--problems", "1",
            "--out", str(tmp_path / "out")]
    assert eval_command(argv) == 0
    out = capsys.readouterr().out
    assert "| env |" in out and "Sampling: none (fixed replies, no model)." in out
