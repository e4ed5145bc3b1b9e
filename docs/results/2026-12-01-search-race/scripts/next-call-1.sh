#!/usr/bin/env bash
# Prepared for the next session (issue 17), first of two calls (next-call-2.sh: the tables);
# NOT RUN in 2026-12-01 (its device time was spent).
# The ping-pong 192x128 kernels (2x1, 1x2; built 2026-12-01, 0 spills by
# scripts/probe_gemm_registers.sh) and the slot layout's tile heights that are not powers of two,
# checked on a GPU before anything relies on them:
# 1. tests: the 192x128 configurations against cuBLAS (KILN_TEST_GEMM_CONFIG), the host launch
#    geometry, the overlap runtime with a 192x128 plan at 1, 2 and 4 ranks (ReduceScatter splits
#    each tile into 96 or 48 rows per rank; 4 ranks share the GPU);
# 2. memcheck and racecheck on both 192x128 kernels;
# If they pass: next-call-2.sh, then empty overlap::awaits_gpu_check (src/overlap/gemm_shape.cpp).
# Prepared on the CPU machine:
#   ninja -C build -j2 kiln kiln_gpu_tests kiln_gemm_capi
#   bash scripts/pack_carry.sh build/kiln build/kiln_gpu_tests build/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-12-01-search-race/scripts/next-call-1.sh",
#             carry=["carry"], timeout_s=600)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next1/c; rm -rf "$out"; mkdir -p "$out"; archive=next1
steps="${STEPS:-tests sanitizers}"; DEADLINE=${DEADLINE:-575}
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
new=(--config "tile=192x128 cluster=2x1 kernel=pingpong" --config "tile=192x128 cluster=1x2 kernel=pingpong")
if step tests; then
  KILN_TEST_GEMM_CONFIG=tile=192x128 capped 60 tests-192.txt build/kiln_gpu_tests \
    --gtest_filter='SignalingGemmGpu.EveryConfigurationMatchesCublas:TunerGpu.HostLaunchGeometryMatchesTheKernel'
  grep -E "^\[ +(OK|FAILED|PASSED) |checking|checked|error" "$out/tests-192.txt" | head -20 | tee -a "$out/summary.txt"
  KILN_TEST_RANKS_PER_GPU=4 gtest_each 240 tests-overlap.txt 'OverlapGpu.OneRank:OverlapGpu.TwoRanks:OverlapGpu.FourRanks'
  grep -E "^\[ +(OK|FAILED|PASSED|EXITED|SKIPPED) |192x128" "$out/tests-overlap.txt" | head -20 | tee -a "$out/summary.txt"
fi
if step sanitizers; then
  capped 90 sanitizer-memcheck.txt compute-sanitizer --tool memcheck --report-api-errors no \
    --kernel-name kns=device_kernel build/kiln overlap gemm --shape 1000x520x264 "${new[@]}" \
    -w 1 -n 2 --rounds 1 --caps 6
  grep -E "ERROR SUMMARY|correctness" "$out/sanitizer-memcheck.txt" | tee -a "$out/summary.txt"
  capped 150 sanitizer-racecheck.txt compute-sanitizer --tool racecheck --report-api-errors no \
    --print-limit 100000 build/kiln overlap gemm --shape 1000x520x264 "${new[@]}" \
    -w 1 -n 2 --rounds 1 --caps 6
  grep -E "RACECHECK SUMMARY|correctness" "$out/sanitizer-racecheck.txt" | tee -a "$out/summary.txt"
fi
pack
