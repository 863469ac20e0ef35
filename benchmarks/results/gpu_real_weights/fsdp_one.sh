#!/usr/bin/env bash
# GPU: a one-process launch with each FSDP2 config (it stopped at the first update before cbdc619).
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target $PWD/.gpu/site .gpu/whl/*.whl || exit 1
export PYTHONPATH=$PWD/.gpu/site:$PWD PYTHONUNBUFFERED=1
# The tests' tiny config pins the CPU; this copy of the worker asks for CUDA and says where it trained.
sed -e 's/micro_batch_size=3,/micro_batch_size=3, device="cuda",/' \
    -e 's/^    depths = \[\]/    print("trained on", trainer.policies.device, flush=True)\n    depths = []/' \
    tests/trainers/distributed_worker.py > tests/trainers/distributed_worker_cuda.py
grep -c 'device="cuda"\|trained on' tests/trainers/distributed_worker_cuda.py
for mode in lora full; do
  extra=""; [ $mode = full ] && extra=--full
  rm -rf .gpu/fsdp/$mode  # a run folder left by an earlier try makes the worker refuse to start
  timeout 200 python3 -m accelerate.commands.launch --config_file configs/accelerate/fsdp2_$mode.yaml --num_processes 1 \
    --fsdp_transformer_layer_cls_to_wrap LlamaDecoderLayer tests/trainers/distributed_worker_cuda.py .gpu/fsdp/$mode --scripted $extra 2>&1 | tail -5
  echo "$mode exit ${PIPESTATUS[0]}"
  python3 - "$mode" <<'PY'
import json, sys, torch
mode = sys.argv[1]; out = f".gpu/fsdp/{mode}"
view = json.load(open(f"{out}/rank-0.json"))
before, after = torch.load(f"{out}/initial.pt"), torch.load(f"{out}/weights.pt")
moved = {k: max(float((after[k][n].float() - before[k][n].float()).abs().max()) for n in before[k]) for k in before}
print(mode, {"step": view["step"], "error": view["error"], "world": view["world"], "modules": view["modules"],
             "device": str(next(iter(next(iter(after.values())).values())).device), "max_change": moved,
             "grad_norms": [{k: round(v, 4) for k, v in h.items() if k.endswith("grad_norm")} for h in view["history"]]})
PY
  cp .gpu/fsdp/$mode/rank-0.json $OUT/fsdp_${mode}_rank0.json
done
