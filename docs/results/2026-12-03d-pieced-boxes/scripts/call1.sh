#!/usr/bin/env bash
# Call 1 of 2026-12-03d (issue 17), one H200: the epilogue's whole-band store box in swizzled
# pieces (store_piece_cols: 144 = 9 x 16, 160 = 5 x 32, 176 = 11 x 16 columns, one 3-D TMA store
# per band) instead of one unswizzled box, whose stmatrix rows 288-352 bytes apart shared banks
# (kiln 1.2 M shared-store bank conflicts at 4096x8192x2048 against nvjet's 0.23 M, 2026-12-03b).
# Steps: `configs` EveryConfigurationMatchesCublas on every pieced configuration plus a 64-column
# and a swapped one (their staging now goes through the same store_staging_byte); `ab` this build
# against 8e4fee4's library (ab/base-8e4fee4.so), same plan, same process (A/A inside: the plan
# from this build twice); `ncu` bank conflicts, idle cycles, instructions for both builds;
# `memcheck` on two pieced plans.
# Prepared: bash scripts/pack_carry.sh build/libkiln_gemm_capi.so build/kiln_gpu_tests ab/base-8e4fee4.so
# Device: run(command="bash docs/results/2026-12-03d-pieced-boxes/scripts/call1.sh", carry=["carry"])
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=${ARCHIVE:-call1}
steps="${STEPS:-configs ab ncu memcheck}"; DEADLINE=${DEADLINE:-570}
source scripts/device_steps.sh
lib=build/libkiln_gemm_capi.so base=ab/base-8e4fee4.so
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
if step configs; then
  for c in x144 x160 x176 x320 "tile=128x128 cluster=2x1 kernel=pingpong" "tile=144x128"; do
    KILN_TEST_GEMM_CONFIG="$c" gtest_each 60 "configs-${c// /_}.txt" 'SignalingGemmGpu.EveryConfigurationMatchesCublas'
    grep -E "checking|cases,|FAILED|OK \]|EXITED|slot|model" "$out/configs-${c// /_}.txt" | head -6 | tee -a "$out/summary.txt"
  done
fi
if step ab; then
  while IFS='|' read -r shape plan; do
    log="ab-$shape-${plan// /_}"
    capped 75 "$log.txt" python3 scripts/torch_gemm_same_process.py --lib $lib --shape "$shape" \
      --plan "$plan" --extra-lib $base --extra-plan "$plan" --rounds 16 --json "$out/$log.json"
    grep -E "^ +[0-9]+x|/base|correctness|Error|error" "$out/$log.txt" | cut -c1-190 | tee -a "$out/summary.txt"
  done <<'SHAPES'
4096x8192x1024|tile=128x144 cluster=2x1 kernel=pingpong raster=m swizzle=1
4096x8192x2048|tile=128x144 cluster=2x1 kernel=pingpong raster=m swizzle=1
8192x8192x2048|tile=128x176 cluster=2x1 kernel=pingpong raster=n swizzle=16
4096x7168x4096|tile=128x160 cluster=2x1 kernel=pingpong raster=n swizzle=16
16384x4096x3584|tile=128x176 cluster=2x1 kernel=pingpong raster=n swizzle=1
SHAPES
fi
if step ncu; then
  metrics=sm__cycles_active.avg,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
  metrics+=,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__inst_executed.sum,gpu__time_duration.sum
  for which in new base; do
    l=$lib; [ $which = base ] && l=$base
    capped 60 "ncu-$which.csv" ncu --clock-control none --nvtx --nvtx-include "profile/" \
      --metrics "$metrics" --csv --page raw \
      python3 scripts/gemm_profile_once.py --lib $l --shape 4096x8192x2048 \
      --plan "tile=128x144 cluster=2x1 kernel=pingpong raster=m swizzle=1"
    python3 scripts/ncu_summary.py "$out/ncu-$which.csv" --tag "$which" 2>&1 | tee -a "$out/summary.txt"
  done
fi
if step memcheck; then
  for plan in "tile=128x144 cluster=2x1 kernel=pingpong raster=m swizzle=8 scheduler=serpentine" \
              "tile=128x160 cluster=1x2 kernel=pingpong raster=n swizzle=2"; do
    capped 60 "memcheck-${plan// /_}.txt" compute-sanitizer --tool memcheck \
      python3 scripts/gemm_profile_once.py --lib $lib --shape 1000x2920x264 --plan "$plan"
    grep -E "ERROR SUMMARY|Error|error" "$out/memcheck-${plan// /_}.txt" | head -3 | tee -a "$out/summary.txt"
  done
fi
pack
