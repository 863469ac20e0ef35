# Sourced by the scripts: use the shared datasets beside the checkout when present (offline machines).
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -z "${LLM_COOP_DATA_DIR:-}" ] && [ -d "$here/../shared/data" ]; then
  export LLM_COOP_DATA_DIR="$here/../shared/data"
fi
export TOKENIZERS_PARALLELISM=false
