#!/usr/bin/env bash
# Call 1 of 2026-12-01d (issue 17). The 2026-12-01c next-call (three 32-round tables, seeded
# shuffle, --race-top 2) showed the search's pick timed as "kiln" up to 3.5% slower than the same
# plan timed as a given copy, always in the copy's favour: the shuffle's seeded sequence put the
# copy first in 10 of 32 rounds and "kiln" in 4, and the first contender after the round's host
# sync reads faster. Here: the table with the balanced order (Williams design, the script's new
# default), three times (bf16, fp16, bf16), with the pick raced as a given copy (--race-top 1):
# an A/A of the new order, and issue 17's criterion measured without the position bias.
# Prepared on the CPU machine:
#   ninja -C build -j2 kiln_gemm_capi
#   bash scripts/pack_carry.sh build/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-12-01d-balanced-order/scripts/call1.sh",
#             carry=["carry"], timeout_s=600)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=call1
steps="${STEPS:-tables}"; DEADLINE=${DEADLINE:-575}
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
if step tables; then
  run=0
  for dtype in bf16 fp16 bf16; do
    run=$((run + 1))
    capped 185 "table-$run-$dtype.txt" python3 scripts/torch_gemm_same_process.py --dtype "$dtype" \
      --rounds 32 --race-top 1 --json "$out/table-$run-$dtype.json"
    cut -c1-150 "$out/table-$run-$dtype.txt" >> "$out/summary.txt"
  done
  python3 docs/results/2026-11-30j-wave-fit/scripts/summarize.py "$out"/*.json 2>&1 | tee -a "$out/summary.txt"
fi
pack
