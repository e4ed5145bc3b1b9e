#!/usr/bin/env bash
# Call 3 of 2026-12-02c (issue 17), one H200: the checks of the commit that makes the store box's
# swizzle one function for the descriptor and the epilogue's staging (store_box_swizzle_bytes).
# 1. racecheck on the two whole-band box layouts (ping-pong 128x144: 4 warps, one 16x144 box each;
#    coop-n 128x320: 8 warps, 16x160 boxes), through the C API on a small shape (one process, four
#    launches of the kernel; `kiln overlap gemm` under racecheck ran past 80 s in two calls);
# 2. SignalingGemmGpu.EveryConfigurationMatchesCublas in one process (25 configurations x 24
#    cases; a line per configuration), capped.
# Prepared here: bash scripts/pack_carry.sh build/kiln_gpu_tests build/libkiln_gemm_capi.so
# Call 4 re-ran it as STEPS="racecheck rest" (call 3's racecheck had a filter compute-sanitizer
# refused, and its capped whole GEMM test reached 23 of the 25 configurations).
# Device: run(command="bash docs/results/2026-12-02c-mainloop/scripts/call3.sh", carry=["carry"], timeout_s=600)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=${ARCHIVE:-call3}
steps="${STEPS:-racecheck gemm}"; DEADLINE=${DEADLINE:-585}
source scripts/device_steps.sh
note "binary: $(cat carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
race() {  # log plan
  capped 150 "$1" compute-sanitizer --tool racecheck --report-api-errors no --print-limit 200 \
    --kernel-name kns=device_kernel python3 scripts/gemm_profile_once.py --shape 264x320x136 --plan "$2"
  grep -E "RACECHECK SUMMARY|hazard|^# " "$out/$1" | head -5 | tee -a "$out/summary.txt"
}
if step racecheck; then
  race racecheck-128x144.txt "tile=128x144 cluster=2x1 kernel=pingpong raster=m swizzle=1"
  race racecheck-128x320.txt "tile=128x320 cluster=2x1 kernel=coop-n raster=m swizzle=1"
fi
if step gemm; then
  capped 300 tests-gemm.txt build/kiln_gpu_tests --gtest_filter=SignalingGemmGpu.EveryConfigurationMatchesCublas
  grep -E "^\[ +(OK|FAILED|PASSED) |cases|expected" "$out/tests-gemm.txt" | head -40 | tee -a "$out/summary.txt"
fi
if step rest; then  # configurations a capped whole run did not reach, one process each
  for c in "tile=144x128 cluster=1x2 kernel=pingpong-swap" "tile=160x128 cluster=1x2 kernel=pingpong-swap"; do
    KILN_TEST_GEMM_CONFIG="$c" capped 40 tests-gemm-one.txt build/kiln_gpu_tests \
      --gtest_filter=SignalingGemmGpu.EveryConfigurationMatchesCublas
    grep -E "cases|^\[ +(OK|FAILED) " "$out/tests-gemm-one.txt" | tee -a "$out/summary.txt"
  done
fi
pack
