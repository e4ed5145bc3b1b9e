#!/usr/bin/env bash
# Call 2 (issue 17): does the search's ranking hold in the same-process table? Issue 17's 12 shapes,
# bf16, shuffled order: kiln's searched GEMM, the search's 6 best candidates as given plans
# (--race-top 6; the first is kiln's own pick, an A/A) and the plan that gave 0.99-1.02 at 8192^3
# and 8192^2x7168 whenever it was picked (128x192 2x1 ping-pong, raster n, swizzle 1), all in the
# same rounds as torch.matmul and the cuBLAS baseline. Twice (each run searches afresh).
# Prepared on the CPU machine:
#   ninja -C build -j2 kiln kiln_gpu_tests kiln_gemm_capi
#   bash scripts/pack_carry.sh build/kiln build/kiln_gpu_tests build/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-12-01-search-race/scripts/call2.sh", carry=["carry"])
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-call2/c; rm -rf "$out"; mkdir -p "$out"; archive=call2
steps="${STEPS:-race}"; DEADLINE=${DEADLINE:-560}
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
if step race; then
  for run in 1 2; do
    capped 270 "race-bf16-$run.txt" python3 scripts/torch_gemm_same_process.py --dtype bf16 \
      --order shuffle --rounds 8 --race-top 6 \
      --extra-plan "tile=128x192 cluster=2x1 kernel=pingpong raster=n swizzle=1" \
      --json "$out/race-bf16-$run.json"
    cut -c1-150 "$out/race-bf16-$run.txt" >> "$out/summary.txt"
  done
fi
pack
