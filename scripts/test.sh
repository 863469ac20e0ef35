#!/usr/bin/env bash
# Install (if needed) and run the whole test suite: `bash scripts/test.sh [pytest args]`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
set +e
.venv/bin/python -m pytest "$@"
status=$?
set -e
if [ "$status" = 5 ]; then
  echo "pytest collected no tests: treating as a failure, a test run must test something" >&2
  exit 1
fi
exit "$status"
