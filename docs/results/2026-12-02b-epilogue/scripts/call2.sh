#!/usr/bin/env bash
# Call 2 of 2026-12-02b (issue 17), one H200: the epilogue that won call 1 (committed), checked.
# Binaries built at the commit: ninja -C build -j2 kiln kiln_gpu_tests;
# bash scripts/pack_carry.sh build/kiln build/kiln_gpu_tests
# 1. tests: every built GEMM configuration against cuBLAS (24 cases each), the host launch
#    geometry against the kernel's, the overlap runtime (including ping-pong 128x144 and 128x176)
#    and its contiguous-rows form at 1, 2 and 4 ranks sharing the GPU;
# 2. compute-sanitizer memcheck and racecheck on the kernels whose epilogue changed.
# Device: run(command="bash docs/results/2026-12-02b-epilogue/scripts/call2.sh", carry=["carry"], timeout_s=590)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=call2
steps="${STEPS:-tests sanitizers}"; DEADLINE=${DEADLINE:-575}
source scripts/device_steps.sh
note "binary: $(cat carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
configs=(--config "tile=128x144 cluster=2x1 kernel=pingpong" --config "tile=128x176 cluster=2x1 kernel=pingpong"
         --config "tile=128x128 cluster=2x1 kernel=pingpong" --config "tile=128x320 kernel=coop-n"
         --config "tile=128x256")
# racecheck's shadow of shared memory is slow: the two new staging layouts (a 144-column band box
# with 4 warps, a 160-column one with 8) only.
racecheck_configs=(--config "tile=128x144 cluster=2x1 kernel=pingpong" --config "tile=128x320 kernel=coop-n")
if step tests; then
  capped 150 tests-gemm.txt build/kiln_gpu_tests \
    --gtest_filter='SignalingGemmGpu.EveryConfigurationMatchesCublas:TunerGpu.HostLaunchGeometryMatchesTheKernel'
  grep -E "^\[ +(OK|FAILED|PASSED) |checking|geometry|error" "$out/tests-gemm.txt" | head -30 | tee -a "$out/summary.txt"
  KILN_TEST_RANKS_PER_GPU=4 gtest_each 260 tests-overlap.txt \
    'OverlapGpu.OneRank:OverlapGpu.TwoRanks:OverlapGpu.FourRanks:OverlapContiguousRowsGpu.OneRank:OverlapContiguousRowsGpu.TwoRanks:OverlapContiguousRowsGpu.FourRanks'
  grep -E "^\[ +(OK|FAILED|PASSED|EXITED|SKIPPED) |rank [0-9]:" "$out/tests-overlap.txt" | head -40 | tee -a "$out/summary.txt"
fi
if step sanitizers; then
  capped 60 sanitizer-memcheck.txt compute-sanitizer --tool memcheck --report-api-errors no \
    --kernel-name kns=device_kernel build/kiln overlap gemm --shape 1000x520x264 "${configs[@]}" \
    -w 1 -n 2 --rounds 1 --caps 6
  grep -E "ERROR SUMMARY|correctness" "$out/sanitizer-memcheck.txt" | tee -a "$out/summary.txt"
  capped 150 sanitizer-racecheck.txt compute-sanitizer --tool racecheck --report-api-errors no \
    --print-limit 100000 build/kiln overlap gemm --shape 600x520x264 "${racecheck_configs[@]}" \
    -w 1 -n 2 --rounds 1 --caps 6
  grep -E "RACECHECK SUMMARY|correctness" "$out/sanitizer-racecheck.txt" | tee -a "$out/summary.txt"
fi
pack
