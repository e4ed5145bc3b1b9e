#!/usr/bin/env bash
# Prepared for the next session (issue 17); NOT RUN in 2026-12-01c (its device time was spent).
# Issue 17's table three times at the table's new default of 32 rounds (A/A copies within 0.8%,
# call 5), bf16, fp16, bf16, each with the search's best 2 raced as given plans (--race-top 2):
# whether the search's pick is the table's fastest of its own top two, now that the table can
# tell 1% apart (8192²x2048 picked 128x128 at 1.037 in call 5 where 128x192 timed 1.020-1.026 in
# other runs). Then the per-shape medians.
# Prepared on the CPU machine:
#   ninja -C build -j2 kiln_gemm_capi
#   bash scripts/pack_carry.sh build/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-12-01c-medians/scripts/next-call.sh",
#             carry=["carry"], timeout_s=600)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/c; rm -rf "$out"; mkdir -p "$out"; archive=next
steps="${STEPS:-tables}"; DEADLINE=${DEADLINE:-575}
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
if step tables; then
  run=0
  for dtype in bf16 fp16 bf16; do
    run=$((run + 1))
    capped 190 "table-$run-$dtype.txt" python3 scripts/torch_gemm_same_process.py --dtype "$dtype" \
      --rounds 32 --race-top 2 --json "$out/table-$run-$dtype.json"
    cut -c1-150 "$out/table-$run-$dtype.txt" >> "$out/summary.txt"
  done
  python3 docs/results/2026-11-30j-wave-fit/scripts/summarize.py "$out"/*.json 2>&1 | tee -a "$out/summary.txt"
fi
pack
