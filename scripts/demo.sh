#!/usr/bin/env bash
# Install (if needed) and run the main job: a short MAGRPO training of SmolLM2-135M-Instruct on
# coop_humaneval-v0 on the CPU, ending with a before/after table. Extra args go to `llm-coop train`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
.venv/bin/llm-coop train --preset cpu-demo "$@"
