#!/usr/bin/env bash
# Create .venv (once) and install the project with its training, test and docs extras.
# torch is pinned first so pip takes the CPU build instead of a multi-GB CUDA one.
# Each stage says what it does; the long installs list the packages pip collects.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
stage() { echo "setup [$1/5, $((SECONDS - started)) s]: $2"; }
collected() { awk '/^(Collecting|Successfully installed)/ { print "  " $0; fflush() }'; }

stage 1 "bubblewrap (the sandbox's strongest backend): installed if missing and allowed"
if [ "$(id -u)" = 0 ] && ! command -v bwrap >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  # Without it the env falls back to plain subprocesses (with a warning).
  (apt-get install -y -qq bubblewrap || (apt-get update -qq && apt-get install -y -qq bubblewrap)) >/dev/null 2>&1 \
    || echo "  note: could not install bubblewrap; the sandbox will use its fallback backend"
fi
python_bin=${PYTHON:-python3}
torch_pin="torch==2.13.0"
stage 2 "the virtual environment .venv: created if missing"
[ -x .venv/bin/python ] || "$python_bin" -m venv .venv
stage 3 "upgrading pip"
.venv/bin/python -m pip install -q --upgrade pip
stage 4 "installing $torch_pin, the CPU build (any torch if that build is not on the index)"
.venv/bin/python -m pip install "$torch_pin" | collected || .venv/bin/python -m pip install torch | collected
stage 5 "installing the project with its extras train, eval, dev, docs, claims (about a minute on a fresh machine)"
.venv/bin/python -m pip install -e ".[train,eval,dev,docs,claims]" | collected
echo "setup: done in $((SECONDS - started)) s"
