#!/usr/bin/env bash
# Call 1 of 2026-12-02 (issue 17). 2026-12-01d's balanced-order tables left one shape above 1.02
# by its median (4096x8192x2048, 1.032) and one marginal (16384x4096x3584, 1.019); that call's
# output was lost with the session's machine. Here, in one call:
#  race:   the four K <= 3584 shapes that have missed 1.02 before, bf16, the search's 8 best
#          candidates raced as given plans plus CUTLASS's twin of the pick, 66+ balanced rounds:
#          does any kiln candidate reach 1.02 in the table's conditions (then the search's
#          ranking is what fails), or none (then the kernel is)?
#  ksweep: 4096x8192 at K = 1024 .. 8192 with the pick raced once: whether kiln / baseline falls
#          as K grows (a per-tile cost, paid once per tile, against a main-loop rate);
#  tables: issue 17's table in bf16 and fp16, 32 balanced rounds, the pick raced as a given copy
#          (the A/A of the balanced order).
# Prepared on the CPU machine:
#   ninja -C build -j2 kiln_gemm_capi
#   bash scripts/pack_carry.sh build/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-12-02-race/scripts/call1.sh", carry=["carry"],
#             timeout_s=600)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=call1
steps="${STEPS:-race ksweep tables}"; DEADLINE=${DEADLINE:-580}
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
table() {  # table LIMIT NAME ARGS...: one run of the same-process table, its rows in the summary
  local limit=$1 name=$2; shift 2
  capped "$limit" "$name.txt" python3 scripts/torch_gemm_same_process.py --json "$out/$name.json" "$@"
  cut -c1-170 "$out/$name.txt" >> "$out/summary.txt"
}
if step race; then
  table 150 race-bf16 --dtype bf16 --rounds 64 --race-top 8 --twin \
    --shape 4096x8192x2048 --shape 16384x4096x3584 --shape 8192x8192x2048 --shape 1000x8192x8192
fi
if step ksweep; then
  table 90 ksweep-bf16 --dtype bf16 --rounds 32 --race-top 1 \
    --shape 4096x8192x1024 --shape 4096x8192x2048 --shape 4096x8192x4096 --shape 4096x8192x8192
fi
if step tables; then
  run=0
  for dtype in bf16 fp16; do
    run=$((run + 1))
    table 170 "table-$run-$dtype" --dtype "$dtype" --rounds 32 --race-top 1
  done
  python3 docs/results/2026-11-30j-wave-fit/scripts/summarize.py "$out"/table-*.json 2>&1 | tee -a "$out/summary.txt"
fi
pack
