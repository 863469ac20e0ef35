"""The writing reward lives in ``writing.reward``, its thresholds in ``writing.thresholds``; importing the
package and the writing envs warns nothing."""

import subprocess
import sys


def test_importing_the_package_and_the_writing_envs_warns_nothing():
    # A fresh interpreter: this test process may already have imported them.
    code = (
        "import warnings\n"
        "warnings.simplefilter('error', DeprecationWarning)\n"
        "import llm_coop_envs, llm_coop_envs.writing, llm_coop_envs.writing.tldr, llm_coop_envs.writing.arxiv_intro\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
