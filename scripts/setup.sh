#!/usr/bin/env bash
# Create .venv (once) and install the project with its training, test and docs extras.
# torch is pinned first so pip takes the CPU build instead of a multi-GB CUDA one.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" = 0 ] && ! command -v bwrap >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  # The sandbox's strongest backend; without it the env falls back to plain subprocesses (with a warning).
  (apt-get install -y -qq bubblewrap || (apt-get update -qq && apt-get install -y -qq bubblewrap)) >/dev/null 2>&1 \
    || echo "note: could not install bubblewrap; the sandbox will use its fallback backend"
fi
python_bin=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$python_bin" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q "torch==2.13.0" || .venv/bin/python -m pip install -q torch
.venv/bin/python -m pip install -q -e ".[train,eval,dev,docs]"
