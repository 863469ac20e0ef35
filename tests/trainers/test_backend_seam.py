"""``Trainer(backend=...)``: a generation backend of the caller's, built from the trainer's policies."""

from llm_coop_envs.core import CoopEnv
from tests.trainers.conftest import LetterTask, build_model, build_tokenizer, tiny_config
from tests.trainers.distributed_worker import ScriptedReplies
from trainers.trainer import Trainer


class CountingReplies(ScriptedReplies):
    calls = 0

    def generate(self, requests):
        self.calls += 1
        return super().generate(requests)


def test_a_backend_factory_gets_the_policies_and_generates_every_rollout(tmp_path):
    built = []

    def scripted(policies):
        built.append(CountingReplies(policies))
        return built[-1]

    tokenizer = build_tokenizer()
    trainer = Trainer(tiny_config(tmp_path), env=CoopEnv(LetterTask()), models=(build_model(tokenizer), tokenizer),
                      backend=scripted)
    assert trainer.backend is built[0] and built[0].policies is trainer.policies
    metrics = trainer.train_step()
    assert metrics["train/joint_samples"] > 0 and len(built) == 1 and built[0].calls >= 1
