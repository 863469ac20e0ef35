#!/usr/bin/env bash
# Install (if needed) and run the main job: a short MAGRPO training of SmolLM2-135M-Instruct (the packaged,
# de-quantised Q4_1 build) on level 1 of the procedural suite coop_procedural-v1 on the CPU, ending with a
# before/after table on held-out problems (pass rate, acc = share of tests passed, how often main calls the
# helper, mean reward; each change with its 95 % interval, and whether it is within noise).
# About 12 minutes on two cores, set-up included (11 min 36 s in a fresh clone at load ~2, its own);
# 26 with other jobs at load ~4
# (benchmarks/results/demo_calibration.md).
# Extra args go to `llm-coop train`.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
bash scripts/setup.sh
source scripts/env.sh
.venv/bin/llm-coop train --preset cpu-demo "$@"
took=$((SECONDS - started))
echo "demo: done in $((took / 60)) min $((took % 60)) s, set-up included"
