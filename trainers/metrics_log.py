"""Metrics to JSONL (always), TensorBoard (default) and Weights & Biases (optional), plus transcripts.

Metric names are namespaced (documented in docs/training.md):

* ``reward/mean``, ``reward/std``, ``reward/max``, ``reward/solved_rate``, ``reward/return_mean``,
  ``reward/<component>`` (mean of each named reward component);
* ``agent/<name>/loss``, ``agent/<name>/advantage_abs_mean``, ``agent/<name>/reply_tokens``, ``agent/<name>/logp_mean``,
  ``agent/<name>/grad_norm``, ``agent/<name>/grad_clipped`` (share of the update's optimizer steps whose gradient
  norm exceeded ``max_grad_norm`` and was scaled down), ``agent/<name>/clip_fraction`` (share of reply tokens
  whose ratio clipping is active);
* ``perf/rollout_s``, ``perf/update_s``, ``perf/step_s``, ``perf/generated_tokens``, ``perf/tokens_per_s``,
  ``perf/problems_per_s`` (over all processes: the slowest one's times);
* ``train/step``, ``train/groups``, ``train/joint_samples``, ``train/flat_groups`` (all siblings equal),
  ``train/groups_tests_vary`` and ``train/groups_coop_vary`` (groups whose siblings differ in the tests
  component, in a cooperation component), ``train/optimizer_steps`` (per agent in the update);
* ``eval/reward``, ``eval/pass_rate``, ``eval/tests_passed``, ``eval/coop_rate`` (rows of held-out evaluations).

A value that is not finite is logged, never dropped: in ``metrics.jsonl`` as the string ``"nan"``,
``"inf"`` or ``"-inf"`` (JSON has no such numbers), in TensorBoard and W&B as the float itself.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

METRICS_FILE = "metrics.jsonl"
SAMPLES_FILE = "samples.jsonl"


class MetricsLogger:
    """Append-only logs under the run folder; every sink is optional except the JSONL file."""

    def __init__(
        self, run_dir: Path, *, tensorboard: bool = True, wandb_project: str | None = None, config: Mapping | None = None
    ) -> None:
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._metrics = open(self.run_dir / METRICS_FILE, "a", encoding="utf-8")
        self._samples = open(self.run_dir / SAMPLES_FILE, "a", encoding="utf-8")
        self._tensorboard = _tensorboard_writer(self.run_dir / "tensorboard") if tensorboard else None
        self._wandb = _wandb_run(wandb_project, self.run_dir.name, config) if wandb_project else None

    def log(self, step: int, metrics: Mapping[str, float]) -> None:
        clean = {k: v if _is_int(v) else float(v) for k, v in metrics.items() if _is_number(v)}
        written = {k: v if math.isfinite(v) else str(float(v)) for k, v in clean.items()}
        self._metrics.write(json.dumps({"step": step, **written}) + "\n")
        self._metrics.flush()
        if self._tensorboard is not None:
            for name, value in clean.items():
                self._tensorboard.add_scalar(name, value, step)
            self._tensorboard.flush()
        if self._wandb is not None:
            self._wandb.log(clean, step=step)

    def log_samples(self, step: int, records: Sequence[Mapping[str, Any]]) -> None:
        for record in records:
            self._samples.write(json.dumps({"step": step, **record}, ensure_ascii=False) + "\n")
        self._samples.flush()

    def close(self) -> None:
        self._metrics.close()
        self._samples.close()
        if self._tensorboard is not None:
            self._tensorboard.close()
        if self._wandb is not None:
            self._wandb.finish()


def read_metrics(run_dir: str | Path) -> list[dict[str, float]]:
    return read_jsonl(Path(run_dir) / METRICS_FILE, missing_ok=False)


def read_jsonl(path: str | Path, missing_ok: bool = True) -> list[dict[str, Any]]:
    """The rows of a JSON Lines file of a run folder (``[]`` for a missing file when ``missing_ok``)."""
    path = Path(path)
    if missing_ok and not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _is_int(value: Any) -> bool:
    """Counts (``train/step``, ...) stay integers in the JSON rows."""
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    if value is None or isinstance(value, str):
        return False
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def _tensorboard_writer(folder: Path):
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:  # tensorboard is in the [train] extra; without it the JSONL log still has everything
        return None
    return SummaryWriter(log_dir=str(folder))


def _wandb_run(project: str, name: str, config: Mapping | None):
    try:
        import wandb
    except ImportError as error:
        raise ImportError("wandb_project is set but wandb is not installed: pip install wandb.") from error
    return wandb.init(project=project, name=name, config=dict(config or {}))
