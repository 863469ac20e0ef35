"""The vLLM boundary, second pass, on the CPU with vLLM's objects replaced at the import line only
(``sys.modules``): the dtype LoRA runs in, one engine per process, a seed per request; and the
trainer's health metrics (``approx_kl``, ``clip_fraction``, ``sampler_logp_gap`` warning once) and its
truncated importance-sampling correction. Unverified on a GPU: what real vLLM accepts and returns."""

from __future__ import annotations

import dataclasses
import sys
import warnings

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

from tests.trainers.conftest import LetterTask, tiny_config  # noqa: E402
from tests.trainers.test_vllm_backend import _policies, _requests  # noqa: E402
from tests.trainers.vllm_standins import fake_vllm_modules  # noqa: E402
from trainers.algorithms.base import LossBatch, policy_gradient_loss  # noqa: E402
from trainers.generation.vllm_backend import Job, VLLMBackend, lora_dtype  # noqa: E402
from trainers.generation.vllm_server import completion_body  # noqa: E402
from trainers.step_metrics import sampler_gap  # noqa: E402
from trainers.train_items import importance_weights  # noqa: E402


@pytest.fixture()
def fake_vllm(monkeypatch):
    for name, module in fake_vllm_modules().items():
        monkeypatch.setitem(sys.modules, name, module)


def test_float32_is_mapped_to_a_dtype_the_lora_kernels_run_in(tmp_path, tiny_models, fake_vllm):
    with pytest.warns(UserWarning, match="LoRA kernels do not run in float32"):
        backend = VLLMBackend(_policies(tmp_path, tiny_models), dtype="float32")
    assert backend.engine.llm.options["dtype"] == "bfloat16"
    assert lora_dtype("bfloat16") == "bfloat16" and lora_dtype("float16") == "float16"
    with pytest.raises(ValueError, match="bfloat16 or float16"):
        lora_dtype("float64")


def test_colocated_engines_are_refused_in_a_multi_process_launch(tmp_path, tiny_models, fake_vllm, monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(NotImplementedError, match="one process only.*vllm_mode=server"):
        VLLMBackend(_policies(tmp_path, tiny_models), dtype="bfloat16")


def test_every_request_gets_its_own_seed_from_torchs_generator(tmp_path, tiny_models, fake_vllm):
    backend = VLLMBackend(_policies(tmp_path, tiny_models), dtype="bfloat16")
    llm = backend.engine.llm

    def seeds():
        backend.generate(_requests())
        return [params.seed for params in llm.calls[-1]["params"]]

    torch.manual_seed(5)
    first, second = seeds(), seeds()
    assert all(isinstance(s, int) for s in first) and len(set(first)) == len(first)
    assert first != second  # a new draw per call
    torch.manual_seed(5)
    assert seeds() == first  # restored generators (a resumed run) ask for the same samples


def test_the_server_request_carries_the_seed(tmp_path):
    from trainers.config import SamplingConfig
    from trainers.generation.vllm_backend import ServedAdapter

    job = Job(ServedAdapter("a-v1", 1, tmp_path), (1, 2), 2, SamplingConfig(), seed=42)
    assert completion_body(job)["seed"] == 42
    assert "seed" not in completion_body(dataclasses.replace(job, seed=None))


# ---------------------------------------------------------------------------- the trainer's side
def test_truncated_importance_weights_and_the_gap():
    old = torch.tensor([[-1.0, -2.0, -0.5]])
    sampler = (torch.tensor([[-1.5, -0.5, 0.0]]), torch.tensor([[1.0, 1.0, 0.0]]))  # the last one unknown
    mask = torch.tensor([[1.0, 1.0, 1.0]])
    weights = importance_weights(sampler, old, mask, cap=1.2)
    torch.testing.assert_close(weights, torch.tensor([[1.2, float(torch.exp(torch.tensor(-1.5))), 1.0]]))
    assert importance_weights(sampler, old, mask, cap=None) is None
    assert sampler_gap(sampler, old, mask) == pytest.approx((0.5 + 1.5, 2.0))
    batch = LossBatch("a", old.clone().requires_grad_(), old, mask, torch.tensor([1.0]), importance_weights=weights)
    plain = dataclasses.replace(batch, importance_weights=None)
    assert float(policy_gradient_loss(batch)) == pytest.approx(float(policy_gradient_loss(plain)) * float(weights.sum()) / 3)


class ShiftedLogprobs:
    """The transformers backend, reporting every sampled token's log-prob ``shift`` nats too high: a
    sampler that drifted from the trained model (as a stale adapter in vLLM would)."""

    def __init__(self, policies, shift):
        from trainers.generation.transformers_backend import TransformersBackend

        self.inner, self.shift = TransformersBackend(policies, dtype="float32"), shift
        self.generates_with_trained_modules = True

    def generate(self, requests):
        return [[dataclasses.replace(c, logprobs=tuple(v + self.shift for v in c.logprobs)) for c in row]
                for row in self.inner.generate(requests)]

    def sync_weights(self):
        pass


def _trainer(tmp_path, tiny_models, shift, **fields):
    from llm_coop_envs.core import CoopEnv
    from trainers.trainer import Trainer

    cfg = tiny_config(tmp_path, steps=2, algo_kwargs={"updates_per_rollout": 2}, **fields)
    return Trainer(cfg, env=CoopEnv(LetterTask()), models=tiny_models,
                   backend=lambda policies: ShiftedLogprobs(policies, shift))


def test_health_metrics_are_logged_and_a_sampler_gap_warns_once(tmp_path, tiny_models):
    trainer = _trainer(tmp_path, tiny_models, shift=0.3)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        history = trainer.train()
    gap_warnings = [w for w in seen if "sampler's log-probs differ" in str(w.message)]
    assert len(gap_warnings) == 1  # two steps above the bound, one warning
    for row in history:
        for agent in ("helper", "main"):
            assert row[f"agent/{agent}/sampler_logp_gap"] == pytest.approx(0.3, abs=1e-3)
            assert row[f"agent/{agent}/approx_kl"] > 0  # the second pass scores a policy that moved
            assert 0 <= row[f"agent/{agent}/clip_fraction"] <= 1


def test_the_transformers_backend_scores_what_it_sampled(tmp_path, tiny_models):
    trainer = _trainer(tmp_path, tiny_models, shift=0.0)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        history = trainer.train(1)
    assert not [w for w in seen if "sampler's log-probs differ" in str(w.message)]
    assert history[0]["agent/helper/sampler_logp_gap"] < 1e-4


def test_the_importance_correction_scales_the_gradient_by_the_capped_ratio(tmp_path, tiny_models):
    """A sampler 0.3 nats too sure of every token: π_old/π_sampler = e^-0.3 on every token (under any
    cap >= 1), so the corrected loss, hence its gradient, is e^-0.3 times the uncorrected one."""
    from tests.trainers.test_global_weights import _gradients

    trainer = _trainer(tmp_path, tiny_models, shift=0.3)
    items = trainer.training_items(trainer.rollout())
    plain = _gradients(trainer, items)
    trainer.cfg = dataclasses.replace(trainer.cfg, importance_cap=2.0)
    corrected = _gradients(trainer, items)
    for key, grad in plain.items():
        torch.testing.assert_close(corrected[key], grad * float(torch.exp(torch.tensor(-0.3))), rtol=1e-4, atol=1e-7)
    with pytest.raises(ValueError, match="importance_cap must be >= 1"):
        tiny_config(tmp_path, importance_cap=0.5)
