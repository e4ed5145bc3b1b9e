#!/usr/bin/env bash
# Prepared for the next session (issue 17), second of two calls, after next-call-1.sh passed (the
# ping-pong 192x128 kernels correct against cuBLAS, in the overlap runtime and under the
# sanitizers); NOT RUN in 2026-12-01.
# Issue 17's table: bf16 with the default search (which leaves 192x128 out while
# overlap::awaits_gpu_check says so), the search's best 3 and 192x128 raced as given plans on
# every shape; then fp16 with the search including 192x128 (search:unchecked=1).
# Device: run(command="bash docs/results/2026-12-01-search-race/scripts/next-call-2.sh",
#             carry=["carry"], timeout_s=600)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next2/c; rm -rf "$out"; mkdir -p "$out"; archive=next2
steps="${STEPS:-tables}"; DEADLINE=${DEADLINE:-575}
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
if step tables; then
  capped 300 race-bf16.txt python3 scripts/torch_gemm_same_process.py --dtype bf16 \
    --order shuffle --rounds 8 --race-top 3 \
    --extra-plan "tile=192x128 cluster=2x1 kernel=pingpong raster=n swizzle=1" \
    --json "$out/race-bf16.json"
  cut -c1-150 "$out/race-bf16.txt" >> "$out/summary.txt"
  capped 200 same-process-fp16.txt python3 scripts/torch_gemm_same_process.py --dtype fp16 \
    --order shuffle --rounds 12 --plan search:unchecked=1 --json "$out/same-process-fp16.json"
  cut -c1-150 "$out/same-process-fp16.txt" >> "$out/summary.txt"
  python3 docs/results/2026-11-30j-wave-fit/scripts/summarize.py "$out"/*.json 2>&1 | tee -a "$out/summary.txt"
fi
pack
