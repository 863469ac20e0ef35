"""Absolute checks of the log-probs the loss uses: against a plain unbatched forward, and against the
sampler's own log-probs under temperature and top-p. Also: every end token ends a reply; LoRA dropout acts."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

from llm_coop_envs.core import CoopEnv  # noqa: E402
from tests.trainers.conftest import LetterTask, build_model, tiny_config  # noqa: E402
from trainers.config import SamplingConfig  # noqa: E402
from trainers.generation.base import GenerationRequest  # noqa: E402
from trainers.trainer import Trainer  # noqa: E402

OBSERVATIONS = {"helper": "def add(x, y): return", "main": "helper main agents cooperate and write code"}


def _trainer(tmp_path, tokenizer, **fields):
    trainer = Trainer(tiny_config(tmp_path, **fields), env=CoopEnv(LetterTask()), models=(build_model(tokenizer), tokenizer))
    torch.manual_seed(1)
    with torch.no_grad():  # peft starts lora_B at zero: make the adapters matter
        for name, param in trainer.policies.slots["helper"].model.named_parameters():
            if "lora_B" in name:
                param.normal_(0.0, 0.5)
    return trainer


def _reference(model, prompt, completion, temperature=1.0, top_p=1.0) -> torch.Tensor:
    """Token t of the completion scored from the logits at position t − 1 of one plain, unbatched
    forward; temperature and nucleus (keep the most likely tokens until their mass reaches top_p,
    renormalise) written out here independently of the code under test."""
    ids = torch.tensor([list(prompt) + list(completion)])
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0].float()
    out = []
    for t, token in enumerate(completion):
        probs = torch.softmax(logits[len(prompt) + t - 1] / temperature, dim=-1)
        order = torch.argsort(probs, descending=True)
        mass_before = torch.cumsum(probs[order], 0) - probs[order]
        kept = order[mass_before < top_p]
        if token not in kept.tolist():
            kept = torch.cat([kept, torch.tensor([token])])
        out.append(float(torch.log(probs[token] / probs[kept].sum())))
    return torch.tensor(out)


def _check_against_reference(trainer, agent, prompts, completions, sampling, **settings):
    slot = trainer.policies.activate(agent)
    with torch.no_grad():
        logps, mask = trainer.policies.token_logprobs(agent, prompts, completions, sampling)
    for row, (prompt, completion) in enumerate(zip(prompts, completions)):
        expected = _reference(slot.model, prompt, completion, **settings)
        torch.testing.assert_close(logps[row, : len(completion)], expected, rtol=1e-4, atol=1e-4)
        assert mask[row].tolist() == [1.0] * len(completion) + [0.0] * (mask.shape[1] - len(completion))


@pytest.mark.parametrize("settings", [{}, {"temperature": 0.7}, {"temperature": 1.3, "top_p": 0.8}])
def test_training_logprobs_equal_a_plain_unbatched_forward(tmp_path, tokenizer, settings):
    trainer = _trainer(tmp_path, tokenizer)
    sampling = SamplingConfig(**settings) if settings else None
    a, b = (list(trainer.policies.prompt_ids(agent, obs)) for agent, obs in OBSERVATIONS.items())
    assert len(a) != len(b)  # rows are left-padded to different widths
    completions = [[5, 6, 7], [8], [9, 10, 11, 12], [13, 14]]
    _check_against_reference(trainer, "main", [a, b, b[:-3], a[:-2]], completions, sampling, **settings)  # full rows
    _check_against_reference(trainer, "main", [a, a, b, a], completions, sampling, **settings)  # shared prompts


def test_empty_completions_score_nothing_and_change_no_other_row(tmp_path, tokenizer):
    """A reply with no tokens (and a batch of only such replies) gets an all-zero mask and leaves the
    other rows' log-probs as the reference's, on both the full-row and the shared-prompt path."""
    trainer = _trainer(tmp_path, tokenizer)
    a, b = (list(trainer.policies.prompt_ids(agent, obs)) for agent, obs in OBSERVATIONS.items())
    completions = [[5, 6, 7], [], [9, 10, 11, 12]]
    _check_against_reference(trainer, "main", [a, b, b[:-3]], completions, None)  # full rows
    _check_against_reference(trainer, "main", [a, a, b], completions, None)  # shared prompts
    for prompts in ([a, b], [a, a]):
        with torch.no_grad():
            logps, mask = trainer.policies.token_logprobs("main", prompts, [[], []])
        assert mask.shape[0] == 2 and not mask.any() and torch.isfinite(logps).all()


@pytest.mark.parametrize("settings", [{"temperature": 0.7}, {"temperature": 1.5, "top_p": 0.7}])
def test_sampler_logprobs_equal_training_logprobs(tmp_path, tokenizer, settings):
    trainer = _trainer(tmp_path, tokenizer)
    sampling = SamplingConfig(max_new_tokens=10, **settings)
    torch.manual_seed(3)
    requests = [GenerationRequest(agent, obs, 3, sampling) for agent, obs in OBSERVATIONS.items()]
    checked = 0
    for request, completions in zip(requests, trainer.backend.generate(requests)):
        for completion in completions:
            assert completion.logprobs is not None and len(completion.logprobs) == len(completion.completion_ids)
            with torch.no_grad():
                logps, _ = trainer.policies.token_logprobs(
                    request.agent, [completion.prompt_ids], [completion.completion_ids], sampling
                )
            torch.testing.assert_close(
                logps[0, : len(completion.completion_ids)], torch.tensor(completion.logprobs), rtol=1e-4, atol=1e-4
            )
            checked += len(completion.completion_ids)
    assert checked > 10


def test_generation_ends_on_every_end_token_of_the_generation_config(tmp_path, tokenizer):
    trainer = _trainer(tmp_path, tokenizer)
    greedy = SamplingConfig(temperature=0.0, max_new_tokens=6)
    request = GenerationRequest("main", OBSERVATIONS["main"], 1, greedy)
    first = trainer.backend.generate([request])[0][0].completion_ids
    assert len(first) > 1 and first[0] != tokenizer.eos_token_id
    model = trainer.policies.slots["main"].model
    model.generation_config.eos_token_id = [tokenizer.eos_token_id, first[0]]  # a second end token
    ended = trainer.backend.generate([request])[0][0]
    assert ended.completion_ids == (first[0],) and not ended.truncated


def test_lora_dropout_acts_in_the_loss_pass(tmp_path, tokenizer):
    prompts, completions = [[5, 6, 7, 8]], [[9, 10, 11]]
    for dropout, differs in ((0.0, False), (0.5, True)):
        trainer = _trainer(tmp_path, tokenizer, lora_dropout=dropout, run_name=f"d{dropout}")
        torch.manual_seed(0)
        runs = [trainer.policies.token_logprobs("main", prompts, completions)[0].detach() for _ in range(2)]
        assert (not torch.equal(runs[0], runs[1])) is differs
        greedy = SamplingConfig(temperature=0.0, max_new_tokens=4)
        request = GenerationRequest("main", OBSERVATIONS["main"], 2, greedy)
        replies = trainer.backend.generate([request])[0]
        assert replies[0].completion_ids == replies[1].completion_ids  # generation runs without dropout


def test_the_loss_sees_the_samplers_logprobs(tmp_path, tokenizer):
    """Through the trainer: the log-probs handed to the algorithm's loss are those of the sampler."""
    from trainers import register_algorithm
    from trainers.algorithms.base import policy_gradient_loss

    seen = []

    @register_algorithm("record_logps_test")
    class RecordLogps:
        def advantages(self, group):
            return group.returns * 0 + 1.0

        def loss(self, batch):
            seen.extend(float(x) for x in (batch.logps.detach() * batch.mask).sum(-1))
            return policy_gradient_loss(batch)

    trainer = _trainer(tmp_path, tokenizer, algo="record_logps_test", steps=1,
                       sampling={"temperature": 0.6, "top_p": 0.9, "max_new_tokens": 6})
    sampled = []
    original = trainer.sample

    def recording_sample(requests, n):
        out = original(requests, n)
        sampled.extend(sum(c.logprobs) for completions in out for c in completions if c.completion_ids)
        return out

    trainer.sample = recording_sample
    trainer.train()
    assert len(seen) == len(sampled) == 8
    assert sorted(seen) == pytest.approx(sorted(sampled), abs=1e-3)


def test_policy_module_still_names_the_log_prob_helpers():
    # trainers.generation and older callers import these from trainers.policy.
    from trainers import logprobs, policy

    assert policy.completion_logprobs is logprobs.completion_logprobs
    assert policy.pad_token_id is logprobs.pad_token_id
