"""Two CPU processes over gloo, launched the way users launch many GPUs (``accelerate launch`` with
configs/accelerate/ddp_one_node.yaml, whose launcher is torchrun), against one process over the
same global batch; exact resume of a 2-process run.

Accelerate's ``--cpu`` flag starts a single process unless MPI is installed (it needs
``--mpirun_hostfile``); its multi-GPU launcher is torchrun, which on a machine without a GPU
starts plain CPU processes; the trainer tells Accelerate to use the CPU, so they join over gloo and
train through DDP. See docs/training.md, "Many processes".
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from trainers.metrics_log import read_metrics

WORKER = Path(__file__).with_name("distributed_worker.py")
DDP_CONFIG = Path(__file__).resolve().parents[2] / "configs" / "accelerate" / "ddp_one_node.yaml"
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}


def launch(out_dir: Path, *args: str, processes: int = 2) -> list[dict]:
    """Run the worker on ``processes`` CPU processes; every rank's view, in rank order."""
    if processes == 1:
        command = [sys.executable, str(WORKER), str(out_dir), *args]
    else:
        # The shipped one-node DDP config, with the process count of this test; port 0 asks for a
        # free port, so parallel CI jobs do not collide.
        command = [sys.executable, "-m", "accelerate.commands.launch", "--config_file", str(DDP_CONFIG),
                   "--num_processes", str(processes), "--main_process_port", "0", str(WORKER), str(out_dir), *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=240, env=ENV)
    assert done.returncode == 0, done.stderr[-4000:]
    return [json.loads((out_dir / f"rank-{rank}.json").read_text()) for rank in range(processes)]


def _without_timing(rows):
    return [{k: v for k, v in row.items() if not k.startswith("perf/")} for row in rows]


def _assert_same_weights(got: dict, want: dict, **tolerance) -> None:
    assert got.keys() == want.keys()
    for key, tensors in want.items():
        for name, value in tensors.items():
            torch.testing.assert_close(got[key][name], value, **tolerance)


@pytest.mark.slow
@pytest.mark.parametrize("layout", [(), ("--full",)], ids=["lora_per_agent", "full_fine_tuning"])
def test_two_ddp_processes_equal_one_process_over_the_same_global_batch(tmp_path, layout):
    two = launch(tmp_path / "two", "--scripted", "--steps", "3", "--problems", "1", *layout)
    one = launch(tmp_path / "one", "--scripted", "--steps", "3", "--problems", "2", *layout, processes=1)
    assert [r["world"] for r in two] == [2, 2] and one[0]["world"] == 1
    assert two[0]["modules"] == ["DistributedDataParallel"] and one[0]["modules"] != two[0]["modules"]
    assert two[0]["seeds"] + two[1]["seeds"] == one[0]["seeds"]  # each rank takes distinct problems
    assert two[0]["sums"] == two[1]["sums"]  # DDP kept the replicas identical
    want = torch.load(tmp_path / "one" / "weights.pt")
    got = torch.load(tmp_path / "two" / "weights.pt")
    initial = torch.load(tmp_path / "one" / "initial.pt")
    for key, tensors in want.items():  # training moved the weights far more than the tolerance below
        assert max(float((tensors[n] - initial[key][n]).abs().max()) for n in tensors) > 1e-2
    # Adam divides by the root of the second moment, so the last bits of the summation order show
    # up at ~1e-5 where a gradient is near 0
    _assert_same_weights(got, want, rtol=1e-3, atol=1e-4)
    # the step's metrics are reduced over both ranks: the same rewards as one process over both problems
    for mine, theirs in zip(two[0]["history"], one[0]["history"]):
        for name in ("reward/mean", "reward/std", "reward/max", "train/groups", "train/joint_samples"):
            assert mine[name] == pytest.approx(theirs[name]), name
        assert mine["agent/helper/grad_norm"] == pytest.approx(theirs["agent/helper/grad_norm"], rel=1e-4)
    assert _without_timing(two[0]["history"]) == _without_timing(two[1]["history"])  # one merged view


@pytest.mark.slow
def test_a_resumed_two_process_run_continues_exactly(tmp_path):
    straight = launch(tmp_path / "straight", "--steps", "3")
    assert straight[0]["seeds"] != straight[1]["seeds"]
    # The same run stopped after step 2: its folder as it was then (checkpoint 3 not yet written).
    shutil.copytree(tmp_path / "straight" / "run", tmp_path / "stopped" / "run")
    shutil.rmtree(tmp_path / "stopped" / "run" / "checkpoints" / "step-00000003")
    checkpoint = tmp_path / "stopped" / "run" / "checkpoints" / "step-00000002"
    rngs = [torch.load(checkpoint / f"random_states_{rank}.pkl", weights_only=False) for rank in (0, 1)]
    assert not torch.equal(rngs[0]["torch_manual_seed"], rngs[1]["torch_manual_seed"])  # each rank its own
    resumed = launch(tmp_path / "stopped", "--steps", "3", "--resume")
    want, got = torch.load(tmp_path / "straight" / "weights.pt"), torch.load(tmp_path / "stopped" / "weights.pt")
    _assert_same_weights(got, want, rtol=0, atol=0)
    assert [r["sums"] for r in resumed] == [r["sums"] for r in straight]
    metrics = read_metrics(tmp_path / "stopped" / "run")
    assert [r["step"] for r in metrics] == [1, 2, 3]  # step 3 was trimmed, then done again
    assert _without_timing(metrics) == _without_timing(read_metrics(tmp_path / "straight" / "run"))


@pytest.mark.slow
@pytest.mark.parametrize("critic", ["mappo", "iac"])  # one head; one head per agent
def test_an_algorithms_own_module_is_synchronised_across_processes(tmp_path, critic):
    ranks = launch(tmp_path, "--scripted", "--steps", "2", "--critic", critic)
    kinds = {rank["owned"]["value_head"][0] for rank in ranks}
    assert kinds == {"DistributedDataParallel"}
    head = ranks[0]["owned"]["value_head"][1]
    assert any(v != 0 for v in head), "the value head never moved from its zero start"
    assert ranks[1]["owned"]["value_head"][1] == head  # different rollouts, one averaged gradient
    assert "algo/explained_variance" in ranks[0]["history"][-1]


@pytest.mark.slow
def test_minibatches_and_several_updates_per_rollout_keep_the_replicas_identical(tmp_path):
    ranks = launch(tmp_path, "--scripted", "--steps", "2", "--minibatch", "3")
    assert ranks[0]["sums"] == ranks[1]["sums"]  # every minibatch's gradient was averaged over both ranks
    for row in ranks[0]["history"]:
        assert row["train/optimizer_steps"] == 2 * 2  # ceil(4 joint samples / 3) x 2 passes, on each rank
    initial = torch.load(tmp_path / "initial.pt")
    moved = torch.load(tmp_path / "weights.pt")
    assert any(not torch.equal(moved[k][n], initial[k][n]) for k in initial for n in initial[k])


@pytest.mark.slow
def test_a_two_process_checkpoint_resumes_in_one_process(tmp_path, tokenizer):
    """DDP keeps a full replica per rank, so a checkpoint loads on any number of processes."""
    from llm_coop_envs.core import CoopEnv
    from tests.trainers.conftest import LetterTask, build_model, tiny_config
    from trainers.trainer import Trainer

    launch(tmp_path, "--steps", "2")
    cfg = tiny_config(tmp_path, steps=3, resume=True, save_every=1, log_samples=1, micro_batch_size=3)
    trainer = Trainer(cfg, env=CoopEnv(LetterTask()), models=(build_model(tokenizer), tokenizer))
    assert trainer.step == 2
    _assert_same_weights({k: trainer.policies.state_dict(k) for k in trainer.policies.keys},
                         torch.load(tmp_path / "weights.pt"), rtol=0, atol=0)
    trainer.train()
    assert [r["step"] for r in read_metrics(tmp_path / "run")] == [1, 2, 3]


@pytest.mark.slow
def test_a_ctrl_c_seen_by_one_rank_stops_both_after_the_same_step(tmp_path):
    ranks = launch(tmp_path, "--steps", "3", "--ctrl-c-on-rank", "1")
    assert [r["step"] for r in ranks] == [1, 1]  # both finished step 1, saved together, stopped
    assert [p.name for p in (tmp_path / "run" / "checkpoints").iterdir()] == ["step-00000001"]


@pytest.mark.slow
def test_a_nan_loss_on_one_rank_stops_both_before_the_update(tmp_path):
    ranks = launch(tmp_path, "--steps", "3", "--nan-on-rank", "0")
    assert [r["step"] for r in ranks] == [1, 1]  # no hang: both stopped in step 2
    assert all("not finite" in r["error"] and "step 2" in r["error"] for r in ranks)
    assert ranks[0]["sums"] == ranks[1]["sums"]  # and neither applied a partial update
    assert [p.name for p in (tmp_path / "run" / "checkpoints").iterdir()] == ["step-00000001"]


def test_fsdp_on_cpu_processes_is_refused_with_a_clear_error(tmp_path, monkeypatch, tiny_models):
    from llm_coop_envs.core import CoopEnv
    from tests.trainers.conftest import LetterTask, tiny_config
    from trainers.trainer import Trainer

    monkeypatch.setenv("ACCELERATE_USE_FSDP", "true")
    with pytest.raises(NotImplementedError, match="FSDP or DeepSpeed was requested.*never on CPU"):
        Trainer(tiny_config(tmp_path), env=CoopEnv(LetterTask()), models=tiny_models)


def test_accelerates_mixed_precision_is_left_to_the_trainers_own_dtypes(tmp_path):
    """A launch (or an earlier trainer in the process) that set Accelerate to bf16 does not put an
    autocast around the trainer's models: train_dtype and generation_dtype decide."""
    script = (
        "import warnings, sys; sys.path.insert(0, '.')\n"
        "from llm_coop_envs.core import CoopEnv\n"
        "from tests.trainers.conftest import LetterTask, build_model, build_tokenizer, tiny_config\n"
        "from trainers.trainer import Trainer\n"
        "t = build_tokenizer()\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        "    warnings.simplefilter('always')\n"
        f"    trainer = Trainer(tiny_config({str(tmp_path)!r}), env=CoopEnv(LetterTask()), models=(build_model(t), t))\n"
        "assert any('train_dtype' in str(w.message) for w in seen)\n"
        "assert not any(hasattr(s.model, '_original_forward') for s in trainer.policies.slots.values())\n"
        "print('OK')\n"
    )
    env = {**ENV, "ACCELERATE_MIXED_PRECISION": "bf16"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=240, env=env,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0 and done.stdout.strip().endswith("OK"), done.stderr[-3000:]
