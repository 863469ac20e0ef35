"""The writing reward lives in ``writing.reward``, its thresholds in ``writing.thresholds``; the old
module names (``levels``, ``config``) still work, with a warning, and nothing in the package uses them."""

import importlib
import subprocess
import sys

import pytest


@pytest.mark.parametrize(("old", "new", "names"), [
    ("llm_coop_envs.writing.levels", "llm_coop_envs.writing.reward", ["PairTexts", "score_pair", "PairScore", "LEVELS"]),
    ("llm_coop_envs.writing.config", "llm_coop_envs.writing.thresholds", ["LevelConfig", "TLDR_V2_LEVELS", "RewardWeights"]),
])
def test_old_module_name_warns_and_gives_the_same_objects(old, new, names):
    current = importlib.import_module(new)
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")):
        shim = importlib.import_module(old)
    for name in names:
        assert getattr(shim, name) is getattr(current, name)


def test_importing_the_package_and_the_writing_envs_warns_nothing():
    # A fresh interpreter: this test process may already hold the old modules.
    code = (
        "import sys, warnings\n"
        "warnings.simplefilter('error', DeprecationWarning)\n"
        "import llm_coop_envs, llm_coop_envs.writing, llm_coop_envs.writing.tldr, llm_coop_envs.writing.arxiv_intro\n"
        "old = [m for m in ('llm_coop_envs.writing.levels', 'llm_coop_envs.writing.config') if m in sys.modules]\n"
        "assert not old, old\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
