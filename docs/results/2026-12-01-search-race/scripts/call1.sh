#!/usr/bin/env bash
# Call 1 of 2026-12-01 (prepared in 2026-11-30j as next-call.sh, run unchanged from there):
# 1. call 6's A/A test (the same plan as "kiln" and as "second"; rotated and shuffled order), to
#    measure the same-process table's order bias;
# 2. issue 17's bf16 table three times with the shuffled order, for per-shape medians
#    (docs/results/2026-11-30j-wave-fit/scripts/summarize.py over the three JSON files).
# Prepared on the CPU machine:
#   ninja -C build -j2 kiln kiln_gpu_tests kiln_gemm_capi
#   bash scripts/pack_carry.sh build/kiln build/kiln_gpu_tests build/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-11-30j-wave-fit/scripts/next-call.sh",
#             carry=["carry"], timeout_s=600)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/c; rm -rf "$out"; mkdir -p "$out"; archive=next
steps="${STEPS:-aa medians}"; DEADLINE=${DEADLINE:-580}
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
plan="tile=128x192 cluster=2x1 kernel=pingpong raster=n swizzle=16"
if step aa; then
  for order in rotate shuffle; do
    capped 75 "aa-$order.txt" python3 scripts/torch_gemm_same_process.py --shape 4096x8192x8192 \
      --shape 8192x8192x8192 --shape 16384x4096x3584 --shape 4096x8192x2048 \
      --plan "$plan" --second-plan "$plan" --rounds 8 --order "$order" --json "$out/aa-$order.json"
    cut -c1-110 "$out/aa-$order.txt" >> "$out/summary.txt"
  done
fi
if step medians; then
  for run in 1 2 3; do
    capped 140 "same-process-bf16-shuffle-$run.txt" python3 scripts/torch_gemm_same_process.py \
      --dtype bf16 --order shuffle --json "$out/same-process-bf16-shuffle-$run.json"
    cut -c1-110 "$out/same-process-bf16-shuffle-$run.txt" >> "$out/summary.txt"
  done
  python3 docs/results/2026-11-30j-wave-fit/scripts/summarize.py "$out"/same-process-bf16-shuffle-*.json \
    2>&1 | tee -a "$out/summary.txt"
fi
pack
