#!/usr/bin/env bash
# The lowest versions pyproject.toml allows for pettingzoo, gymnasium, transformers, peft and accelerate
# (.ci/lower_bounds.py says which and why torch is not among them), installed in a fresh venv, then
# the tests that exercise them: the env API (PettingZoo's and Gymnasium's checks, render modes), the
# generation and log-prob tests, and the bounds test. A few minutes, most of them pip.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"${PYTHON:-python3}" -m venv "$work/venv"
py="$work/venv/bin/python"
"$py" -m pip install -q --upgrade pip
torch_pin=$(grep -o 'torch==[0-9.]*' scripts/setup.sh | head -n 1)  # the CPU build setup.sh installs
"$py" -m pip install -q "$torch_pin" || "$py" -m pip install -q torch
"$py" .ci/lower_bounds.py > "$work/requirements.txt"
"$py" -m pip install -q -r "$work/requirements.txt"
# The package itself (no dependencies): in_tested_range reads its declared ranges, so the paths used
# inside them (packed weights, the owned model read from transformers' checkpoints, peft's hooks) are the
# ones tested here.
"$py" -m pip install -q --no-deps -e .
echo "lower bounds: $("$py" -m pip list --format=freeze 2>/dev/null \
  | grep -iE '^(pettingzoo|gymnasium|transformers|peft|accelerate|torch)==' | tr '\n' ' ')"
source scripts/env.sh
"$py" -m pytest -p no:cacheprovider \
  tests/test_dependency_bounds.py tests/core tests/integrations/test_pettingzoo_api.py \
  tests/integrations/test_gymnasium.py tests/trainers/test_generation.py tests/trainers/test_logprobs.py \
  tests/trainers/test_decode.py tests/lm \
  tests/trainers/test_portable_model_folder.py "$@"
