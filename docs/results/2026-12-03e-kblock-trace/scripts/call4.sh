#!/usr/bin/env bash
# Call 4 of 2026-12-03e (issue 17), one H200: call 3's search plus the near-tie rule (stage 3's
# least-traffic candidate first among those within 1% of the fastest, least_traffic_near_tie).
# Issue 17's table in bf16 (32 rounds, the search's first candidate raced), then the clock probe
# on the search's picks at three long-K shapes, as far as the device budget goes.
# Prepared: bash scripts/pack_carry.sh build/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-12-03e-kblock-trace/scripts/call4.sh", carry=["carry"])
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=${ARCHIVE:-call4}
steps="${STEPS:-tables clock}"; DEADLINE=${DEADLINE:-330}
source scripts/device_steps.sh
lib=build/libkiln_gemm_capi.so
note "binary: $(cat carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
table() {  # name dtype
  capped 230 "table-$1.txt" python3 scripts/torch_gemm_same_process.py --dtype "$2" --rounds 32 \
    --race-top 1 --json "$out/table-$1.json"
  cut -c1-190 "$out/table-$1.txt" >> "$out/summary.txt"
}
if step tables; then
  table bf16 bf16
  python3 docs/results/2026-11-30j-wave-fit/scripts/summarize.py "$out"/table-*.json 2>&1 | tee -a "$out/summary.txt"
fi
# The clock step ran as scripts/gemm_clock_probe.py (--cycles for --repeats) at 3c57054; that
# script is now scripts/gemm_power_clock.py, which takes several --plan.
if step clock; then  # kiln0: the search's pick
  for shape in 4096x8192x8192 8192x8192x8192 16384x8192x4096; do
    capped 60 "clock-$shape.txt" python3 scripts/gemm_power_clock.py --lib $lib --shape $shape \
      --plan "" --seconds 2 --repeats 2 --json "$out/clock-$shape.json"
    cut -c1-260 "$out/clock-$shape.txt" | tee -a "$out/summary.txt"
  done
fi
pack
