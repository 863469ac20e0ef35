"""``-v4`` with the real small model: genuine pairs keep a high reward and every hostile family stays below it.

Slow (the model reads about 40 pairs per env); skipped when torch or the default model is not on this
machine (``llm-coop pull-model`` fetches it; the tests never download it).
"""

import pytest

from benchmarks.writing import hostile_facts
from benchmarks.writing.hostile import FAMILIES, GAIN_FAMILIES, ONLY, SUBTLE_FAMILIES, cases, step_rewards

pytestmark = pytest.mark.slow
SOURCES = 3
"""Sources per env: enough to see each family on several texts, few enough for a CPU."""
MAX_SHARE = 0.6
"""Every family keeps less than this share of the genuine pair's reward on the same source."""
KNOWN_OPEN = {"corrupted facts"}
"""Families -v4 does not yet hold below MAX_SHARE on these sources (benchmarks/results/writing_v4/hostile.md):
they must still score below the genuine pair."""
V4_FAMILIES = {n: f for n, f in FAMILIES.items() if n not in hostile_facts.FAMILIES}
"""-v4 is held to the families of its own issue; the -v5 issue's families are -v5's
(benchmarks/results/writing_v5/v5_results.md)."""


@pytest.fixture(scope="module")
def default_model():
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from llm_coop_envs.lm.cache import default_model_path, is_pulled

    if not is_pulled(default_model_path()):
        pytest.skip("the default model is not on this machine (llm-coop pull-model)")


@pytest.mark.parametrize("env_id", ["tldr-v4", "arxiv_intro-v4"])
def test_genuine_pairs_beat_every_hostile_family(default_model, data_dir, env_id):
    import llm_coop_envs

    env = llm_coop_envs.make(env_id, split="all")
    kind = "tldr" if env_id.startswith("tldr") else "arxiv"
    top = env.task.max_reward()
    for task_id, case in cases(kind, env.task)[:SOURCES]:
        pairs = {"genuine": case.genuine, **{n: f(case) for n, f in V4_FAMILIES.items() if ONLY.get(n, kind) == kind}}
        rewards = step_rewards(env, task_id, pairs)
        genuine = rewards.pop("genuine")
        assert genuine >= 0.6 * top, (task_id, genuine)
        for name, reward in rewards.items():
            if name in GAIN_FAMILIES:
                assert reward <= genuine + 1e-9, (task_id, name, reward, genuine)
            elif name in KNOWN_OPEN or name in SUBTLE_FAMILIES:
                assert reward <= genuine + 1e-9, (task_id, name, reward, genuine)
            else:
                assert reward < MAX_SHARE * genuine, (task_id, name, reward, genuine)
