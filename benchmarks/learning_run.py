"""Retired: the CPU learning run is now ``llm-coop bench`` (seeds, equal budgets, confidence intervals).

    python -m benchmarks.learning_run [llm-coop bench arguments]    # same as: llm-coop bench ...

This module only forwards its arguments to ``llm-coop bench`` with a deprecation warning. The results
it wrote before (``benchmarks/results/cpu_learning/``) stay as they were; their flags
(``--max-new-tokens``, ``--seed``, ...) became ``--sample-tokens``, ``--seeds``, ... (see
``llm-coop bench --help`` and docs/benchmarking.md).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    warnings.warn("benchmarks.learning_run is deprecated: use `llm-coop bench`", DeprecationWarning, stacklevel=2)
    from benchmarks.learning.cli import bench_command

    return bench_command(list(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    warnings.simplefilter("default", DeprecationWarning)
    raise SystemExit(main())
