"""Tiny, randomly initialised models built in the test (never downloaded) and a task they can learn."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from llm_coop_envs.core import CoopEnv, Evaluation, RewardResult

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
CORPUS = [
    "Write the letters a and b. Reply with many a letters and a few b letters.",
    "def add(x, y): return x + y  # helper main agents cooperate",
    "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 .,:;!?()[]{}<>=+-*/'\"\n",
]


def build_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE(unk_token=None))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320, special_tokens=["<|pad|>", "<|end|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tokenizer.train_from_iterator(CORPUS * 4, trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, pad_token="<|pad|>", eos_token="<|end|>")
    fast.chat_template = CHAT_TEMPLATE
    return fast


def build_model(tokenizer, seed: int = 0, hidden: int = 32):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id, bos_token_id=None,
    )
    return LlamaForCausalLM(config).eval()


@pytest.fixture(scope="session")
def tokenizer():
    return build_tokenizer()


@pytest.fixture()
def tiny_models(tokenizer):
    """A fresh (model, tokenizer) pair per test, identical across tests (seeded)."""
    return build_model(tokenizer), tokenizer


class LetterTask:
    """Each agent is paid for the share of the letter 'a' in its reply: graded, so random models differ."""

    agents = ("helper", "main")

    def __len__(self) -> int:
        return 6

    def task_id(self, index: int) -> str:
        return f"letters/{index}"

    def prompt(self, index: int, agent: str) -> str:
        return f"Problem {index}: write many a letters, {agent}."

    def evaluate(self, index: int, replies: Mapping[str, str]) -> Evaluation:
        shares = {a: replies[a].count("a") / max(len(replies[a]), 1) for a in self.agents}
        feedback = {a: f"{shares[a]:.0%} of your reply is 'a'" for a in self.agents}
        solved = all(share > 0.5 for share in shares.values())
        return Evaluation(RewardResult.from_components(shares), solved=solved, feedback=feedback)


@pytest.fixture()
def letter_env():
    return CoopEnv(LetterTask())


def tiny_config(tmp_path, **fields):
    from trainers.config import TrainConfig

    defaults = dict(
        env="letters-v0", run_dir=str(tmp_path), run_name="run", group_size=4, steps=2, learning_rate=5e-2,
        lora_r=4, lora_alpha=8, sampling={"max_new_tokens": 8, "temperature": 1.0}, progress_bar=False,
        tensorboard=False, generation_dtype="float32", train_dtype="float32", env_workers=2,
        cpu_threads=1,  # fixed: runs compared bit for bit (resume, many processes) need one thread count
        device="cpu",  # the tests build CPU tensors next to the policies' (a visible GPU failed 13 of them)
    )
    defaults.update(fields)
    return TrainConfig(**defaults)


@pytest.fixture(autouse=True)
def _one_thread():
    """Tiny models gain nothing from threads, and the machine's two cores are shared."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)
