#!/usr/bin/env bash
# Device run for issue 18's first defects (1: epochs committed after the GEMM launch; 3: copy-engine
# AllReduce summed in rank order; 7: comm=ce plans in the GPU tests), multi-rank tests with their
# ranks on the one GPU. The new tests run on the fixed build (build/) and on a build of the same
# tests with the fixes taken out (build-before/kiln_gpu_tests), where they must fail.
# Writes /tmp/kiln-defects/d/ and packs it as $OUT/defects.tar.gz.
# Usage: bash scripts/device_overlap_defects.sh [after] [before] [sanitizer]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/device_env.sh >/dev/null
steps=${*:-after before sanitizer}
out=/tmp/kiln-defects/d; rm -rf "$out"; mkdir -p "$out"
archive=defects
source scripts/device_steps.sh
note "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
export KILN_TEST_RANKS_PER_GPU=4
new_tests='OverlapGpu.ThrowingLaunch*:OverlapGpu.CopyEngine*'

if step after; then
  timed 420 tests-after.txt build/kiln_gpu_tests --gtest_filter='OverlapGpu.*'
  grep -E "^\[       OK|^\[  FAILED|^\[  PASSED|SKIPPED" "$out/tests-after.txt" | tee -a "$out/summary.txt"
fi

if step before; then
  timed 240 tests-before.txt build-before/kiln_gpu_tests --gtest_filter="$new_tests"
  grep -E "^\[       OK|^\[  FAILED|^\[  PASSED|differ bitwise|timed out|did not" "$out/tests-before.txt" | head -20 | tee -a "$out/summary.txt"
fi

if step sanitizer; then
  timed 300 sanitizer-memcheck.txt compute-sanitizer --tool memcheck --target-processes all \
    --report-api-errors no --kernel-name-exclude kns=ncclDevKernel build/kiln_gpu_tests \
    --gtest_filter='OverlapGpu.ThrowingLaunchLeavesTheOperationUsable:OverlapGpu.CopyEngineAllReduceBitwiseIdenticalThreeRanks'
  grep -E "ERROR SUMMARY|^\[       OK|^\[  FAILED|^\[  PASSED" "$out/sanitizer-memcheck.txt" | tee -a "$out/summary.txt"
fi
pack
