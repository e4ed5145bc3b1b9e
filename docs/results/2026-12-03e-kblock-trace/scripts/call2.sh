#!/usr/bin/env bash
# Call 2 of 2026-12-03e (issue 17), one H200: call 1's clock probe found kiln's GEMM at the
# baseline's cycles but a 5-9% lower SM clock at K = 8192 (the 700 W cap: more energy per cycle).
# Which tile orders and configurations cost less energy: the clock probe over kiln plans that differ
# only in order (static, claimed and serpentine bands, raster), signalling (eager / deferred) and
# tile, at 4096x8192x8192, 8192x8192x8192 and 4096x8192x2048; Nsight Compute's DRAM and L2 traffic
# of the same plans (one launch each).
# Prepared: bash scripts/pack_carry.sh build/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-12-03e-kblock-trace/scripts/call2.sh", carry=["carry"])
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=${ARCHIVE:-call2}
steps="${STEPS:-clock ncu}"; DEADLINE=${DEADLINE:-540}
source scripts/device_steps.sh
lib=build/libkiln_gemm_capi.so
note "binary: $(cat carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
pp="cluster=2x1 kernel=pingpong"
declare -A plans
plans[4096x8192x8192]="tile=128x144 $pp raster=m swizzle=1;tile=128x144 $pp raster=m swizzle=16 scheduler=serpentine;tile=128x144 $pp raster=m swizzle=8 scheduler=claimed;tile=128x144 $pp raster=n swizzle=16;tile=128x144 $pp raster=m swizzle=1 signal=deferred;tile=128x128 $pp raster=n swizzle=4 cap=128 scheduler=claimed;tile=256x128 cluster=2x1 kernel=coop raster=m swizzle=1;tile=128x256 cluster=2x1 kernel=coop raster=n swizzle=8"
plans[8192x8192x8192]="tile=128x176 $pp raster=n swizzle=1 scheduler=claimed;tile=128x176 $pp raster=m swizzle=16 scheduler=serpentine;tile=128x192 $pp raster=m swizzle=8 scheduler=serpentine;tile=128x144 $pp raster=m swizzle=16 scheduler=serpentine;tile=256x128 cluster=2x1 kernel=coop raster=m swizzle=8"
plans[4096x8192x2048]="tile=128x144 $pp raster=m swizzle=1;tile=128x144 $pp raster=m swizzle=16 scheduler=serpentine;tile=128x144 $pp raster=m swizzle=1 signal=deferred;tile=128x192 $pp raster=m swizzle=1"
# The clock step ran as scripts/gemm_clock_probe.py (--cycles for --repeats) at 3c57054; that
# script is now scripts/gemm_power_clock.py, which takes several --plan.
if step clock; then
  for shape in 4096x8192x8192 8192x8192x8192 4096x8192x2048; do
    IFS=';' read -ra list <<< "${plans[$shape]}"; args=()
    for p in "${list[@]}"; do args+=(--plan "$p"); done
    capped 120 "clock-$shape.txt" python3 scripts/gemm_power_clock.py --lib $lib --shape $shape \
      "${args[@]}" --seconds 2 --repeats 2 --json "$out/clock-$shape.json"
    cut -c1-230 "$out/clock-$shape.txt" | tee -a "$out/summary.txt"
  done
fi
if step ncu; then  # DRAM and L2 traffic, instructions, cycles of the same plans (one launch each)
  metrics=dram__bytes_read.sum,dram__bytes_write.sum,lrc__lts2lrc_sectors_op_read.sum
  metrics+=,sm__cycles_active.avg,smsp__inst_executed.sum,gpu__time_duration.sum
  for shape in 4096x8192x8192 8192x8192x8192; do
    IFS=';' read -ra list <<< "${plans[$shape]}"; i=0
    for p in "${list[@]}"; do
      capped 40 "ncu-$shape-$i.csv" ncu --clock-control none --nvtx --nvtx-include "profile/" \
        --metrics "$metrics" --csv --page raw \
        python3 scripts/gemm_profile_once.py --lib $lib --shape $shape --plan "$p"
      python3 scripts/ncu_summary.py "$out/ncu-$shape-$i.csv" --tag "$shape #$i" 2>&1 | tee -a "$out/summary.txt"
      i=$((i + 1))
    done
  done
fi
pack
