#!/usr/bin/env bash
# Call 2 of 2026-12-03c (issue 17), one H200: claimed tiles in kiln's band order (band_order.hpp):
# CUTLASS's swizzle bands without their padding tiles (57 column tiles of 144 were 64 at swizzle 8),
# optionally serpentine (scheduler=serpentine), as nvjet maps its claimed items. 2026-12-03b's
# claimed orders with swizzles 2-8 were 4-38% slower, but carried 2-12% padding tiles; this
# measures the order itself: memcheck, Nsight Compute's L2 request-coalescer counters at
# 4096x8192x2048, and per-shape A/B against the static plan in one process.
# Call 1 found every claimed order 5-6% slower than the static one, claimed swizzle 1 included,
# which 2026-12-03's scheduler ran as fast as static: the band order's divisions sat in the
# producer's path to its next tile. Here the leader computes the cluster tile when it claims
# (a tile ahead) and sends it in the answer. Step `old`: claimed swizzle 1 (the same order in both
# builds) from this build and from 2026-12-03b's library (ab/base.so), same process.
# Prepared: bash scripts/pack_carry.sh build/libkiln_gemm_capi.so ab/base.so
# Device: run(command="bash docs/results/2026-12-03c-band-order/scripts/call2.sh", carry=["carry"])
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=${ARCHIVE:-call2}
steps="${STEPS:-memcheck old lrc ab}"; DEADLINE=${DEADLINE:-570}
source scripts/device_steps.sh
lib=build/libkiln_gemm_capi.so
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
p144="tile=128x144 cluster=2x1 kernel=pingpong"
if step memcheck; then
  for plan in "$p144 raster=m swizzle=8 scheduler=serpentine" \
              "tile=192x128 cluster=1x2 kernel=pingpong raster=n swizzle=4 scheduler=serpentine"; do
    capped 60 "memcheck-${plan// /_}.txt" compute-sanitizer --tool memcheck \
      python3 scripts/gemm_profile_once.py --lib $lib --shape 1000x2920x264 --plan "$plan"
    grep -E "ERROR SUMMARY|Error|error" "$out/memcheck-${plan// /_}.txt" | head -3 | tee -a "$out/summary.txt"
  done
fi
if step old; then
  for shape in 4096x8192x2048 8192x8192x2048; do
    capped 60 "old-$shape.txt" python3 scripts/torch_gemm_same_process.py --lib $lib \
      --shape "$shape" --plan "$p144 raster=m swizzle=1" --extra-lib ab/base.so \
      --extra-plan "$p144 raster=m swizzle=1 scheduler=claimed" --rounds 16 --json "$out/old-$shape.json"
    grep -E "^ +[0-9]+x|/base|correctness|Error|error" "$out/old-$shape.txt" | cut -c1-190 | tee -a "$out/summary.txt"
  done
fi
if step lrc; then
  metrics=sm__cycles_active.avg,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
  metrics+=,lrc__request_sectors_op_read_coalescable.sum,lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum
  metrics+=,lrc__lts2lrc_sectors_op_read.sum,dram__bytes_read.sum,gpu__time_duration.sum
  for v in static-m1 claimed-m1 claimed-m8 serpentine-m4 serpentine-m8 serpentine-m16; do
    sched=${v%-*}; o=${v#*-}
    plan="$p144 raster=${o:0:1} swizzle=${o:1} scheduler=$sched"
    capped 60 "ncu-$v.csv" ncu --clock-control none --nvtx --nvtx-include "profile/" \
      --metrics "$metrics" --csv --page raw \
      python3 scripts/gemm_profile_once.py --lib $lib --shape 4096x8192x2048 --plan "$plan"
    python3 scripts/ncu_summary.py "$out/ncu-$v.csv" --tag "$v" 2>&1 | tee -a "$out/summary.txt"
  done
fi
if step ab; then
  # shape | tile and cluster | the static plan's order | the band orders' raster
  while IFS='|' read -r shape config order raster; do
    extra=(--extra-plan "$config raster=$raster swizzle=1 scheduler=claimed")
    for b in 2 4 8 16; do extra+=(--extra-plan "$config raster=$raster swizzle=$b scheduler=claimed"); done
    for b in 1 2 4 8 16; do extra+=(--extra-plan "$config raster=$raster swizzle=$b scheduler=serpentine"); done
    capped 90 "ab-$shape-${config// /_}.txt" python3 scripts/torch_gemm_same_process.py --lib $lib \
      --shape "$shape" --plan "$config $order" "${extra[@]}" --rounds 16 \
      --json "$out/ab-$shape-${config// /_}.json"
    grep -E "^ +[0-9]+x|/base|correctness|Error|error" "$out/ab-$shape-${config// /_}.txt" | cut -c1-190 | tee -a "$out/summary.txt"
  done <<'SHAPES'
4096x8192x2048|tile=128x144 cluster=2x1 kernel=pingpong|raster=m swizzle=1|m
8192x8192x2048|tile=128x144 cluster=2x1 kernel=pingpong|raster=m swizzle=1|m
8192x8192x2048|tile=192x128 cluster=1x2 kernel=pingpong|raster=n swizzle=1|n
4096x8192x8192|tile=128x144 cluster=2x1 kernel=pingpong|raster=m swizzle=1|m
16384x4096x3584|tile=192x128 cluster=1x2 kernel=pingpong|raster=n swizzle=1|n
4096x7168x4096|tile=128x176 cluster=2x1 kernel=pingpong|raster=m swizzle=1|m
SHAPES
fi
pack
