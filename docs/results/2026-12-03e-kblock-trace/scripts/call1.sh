#!/usr/bin/env bash
# Call 1 of 2026-12-03e (issue 17), one H200: which k-blocks of CUTLASS's ping-pong main loop run
# slow. The trace build (-DKILN_MAINLOOP_TRACE=ON: clock records of each k-block of a warp group's
# first 16 tiles and of the epilogue's entry / stores issued / exit) on the issue's slowest shapes,
# with the epilogue as it is and with its staging and stores skipped (probe 1: wrong outputs by
# design); whether the trace build runs at the default build's speed; and the clock probe
# (scripts/gemm_clock_probe.py at 3c57054, since folded into scripts/gemm_power_clock.py: --plan repeatable): each contender back to back for seconds under the power cap, its
# time split into cycles and clock.
# Prepared: bash scripts/pack_carry.sh build/libkiln_gemm_capi.so ab/trace.so
# Device: run(command="bash docs/results/2026-12-03e-kblock-trace/scripts/call1.sh", carry=["carry"])
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=${ARCHIVE:-call1}
steps="${STEPS:-trace rep clock}"; DEADLINE=${DEADLINE:-400}
source scripts/device_steps.sh
lib=build/libkiln_gemm_capi.so traced=ab/trace.so
note "binary: $(cat carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
p144="tile=128x144 cluster=2x1 kernel=pingpong raster=m swizzle=1"
p128="tile=128x128 cluster=2x1 kernel=pingpong raster=m swizzle=1"
if step trace; then
  while IFS='|' read -r shape probe plan; do
    log="trace-$shape-$(echo "$plan" | cut -d' ' -f1 | tr = -)-probe$probe"
    capped 90 "$log.txt" python3 scripts/gemm_mainloop_trace.py collect --lib $traced --shape $shape \
      --plan "$plan" --probe "$probe" --json "$out/$log.json"
    cat "$out/$log.txt" | cut -c1-400 | tee -a "$out/summary.txt"
    xz -f "$out/$log.json"
  done <<SHAPES
4096x8192x2048|0|$p144
4096x8192x2048|1|$p144
4096x8192x8192|0|$p144
4096x8192x8192|1|$p144
8192x8192x2048|0|$p144
4096x8192x2048|0|$p128
4096x8192x2048|1|$p128
SHAPES
fi
if step rep; then  # the trace build against the default one, same plan, same process
  capped 60 "rep-4096x8192x2048.txt" python3 scripts/torch_gemm_same_process.py --lib $lib \
    --shape 4096x8192x2048 --plan "$p144" --extra-lib $traced --extra-plan "$p144" --rounds 8 \
    --json "$out/rep-4096x8192x2048.json"
  grep -E "^ +[0-9]+x|/base|correctness|Error|error" "$out/rep-4096x8192x2048.txt" | cut -c1-190 | tee -a "$out/summary.txt"
fi
# The clock step ran as scripts/gemm_clock_probe.py (--cycles for --repeats) at 3c57054; that
# script is now scripts/gemm_power_clock.py, which takes several --plan.
if step clock; then
  while IFS='|' read -r shape plans; do
    IFS=';' read -ra list <<< "$plans"; args=()
    for p in "${list[@]}"; do args+=(--plan "$p"); done
    capped 60 "clock-$shape.txt" python3 scripts/gemm_power_clock.py --lib $lib --shape $shape \
      "${args[@]}" --seconds 2 --repeats 2 --json "$out/clock-$shape.json"
    cat "$out/clock-$shape.txt" | cut -c1-200 | tee -a "$out/summary.txt"
  done <<SHAPES
4096x8192x8192|$p144;tile=128x128 cluster=2x1 kernel=pingpong raster=n swizzle=4 cap=128 scheduler=claimed
4096x8192x2048|$p144
8192x8192x8192|tile=128x176 cluster=2x1 kernel=pingpong raster=n swizzle=1 scheduler=claimed
SHAPES
fi
pack
