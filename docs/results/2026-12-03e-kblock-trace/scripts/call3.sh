#!/usr/bin/env bash
# Call 3 of 2026-12-03e (issue 17), one H200: the search with least-traffic band orders in its
# sustained stage (overlap/operand_traffic.hpp). The clock probe on the search's picks at the two
# long-K shapes (and the least-traffic order of 128x144 given), then issue 17's table in bf16 and
# fp16 (32 rounds, the search's first candidate raced).
# Prepared: bash scripts/pack_carry.sh build/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-12-03e-kblock-trace/scripts/call3.sh", carry=["carry"])
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=${ARCHIVE:-call3}
steps="${STEPS:-clock tables}"; DEADLINE=${DEADLINE:-560}
source scripts/device_steps.sh
lib=build/libkiln_gemm_capi.so
note "binary: $(cat carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
# The clock step ran as scripts/gemm_clock_probe.py (--cycles for --repeats) at 3c57054; that
# script is now scripts/gemm_power_clock.py, which takes several --plan.
if step clock; then  # kiln0: the search's pick; kiln1: a given least-traffic 128x144 order
  for shape in 4096x8192x8192 8192x8192x8192; do
    capped 90 "clock-$shape.txt" python3 scripts/gemm_power_clock.py --lib $lib --shape $shape \
      --plan "" --plan "tile=128x144 cluster=2x1 kernel=pingpong raster=n swizzle=8 scheduler=serpentine" \
      --seconds 2 --repeats 2 --json "$out/clock-$shape.json"
    cut -c1-260 "$out/clock-$shape.txt" | tee -a "$out/summary.txt"
  done
fi
table() {  # name dtype
  capped 230 "table-$1.txt" python3 scripts/torch_gemm_same_process.py --dtype "$2" --rounds 32 \
    --race-top 1 --json "$out/table-$1.json"
  cut -c1-190 "$out/table-$1.txt" >> "$out/summary.txt"
}
if step tables; then
  table bf16 bf16
  table fp16 fp16
  python3 docs/results/2026-11-30j-wave-fit/scripts/summarize.py "$out"/table-*.json 2>&1 | tee -a "$out/summary.txt"
fi
pack
