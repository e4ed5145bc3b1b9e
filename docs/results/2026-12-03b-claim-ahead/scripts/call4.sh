#!/usr/bin/env bash
# Call 4 of 2026-12-03b, one H200: b876f64's refactor (overlap::is_pingpong: plan validation, the
# search's stage 3 and the GPU tests take "built with claimed tiles too" from one function) had
# only run on the CPU machine. The GPU tests it touches, on HEAD's kiln_gpu_tests: claimed tiles
# bitwise equal to the static order on every ping-pong configuration, both search tests, every
# configuration against cuBLAS for the ping-pong-swap kernels and ping-pong 128x144 (the swapped
# kernels are the case is_pingpong added to the test's list), the one-rank overlap tests.
# Prepared: cmake --build build -j2 --target kiln_gpu_tests; bash scripts/pack_carry.sh build/kiln_gpu_tests
# Device: run(command="bash docs/results/2026-12-03b-claim-ahead/scripts/call4.sh", carry=["carry"])
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=${ARCHIVE:-call4}
steps="${STEPS:-bitwise search configs overlap}"; DEADLINE=${DEADLINE:-330}
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
verdicts() { grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED|EXITED) |cases, [0-9]+ failed|compared|expected|checking" "$out/$1" | tee -a "$out/summary.txt"; }
if step bitwise; then
  gtest_each 60 tests-bitwise.txt 'SignalingGemmGpu.ClaimedTilesMatchTheStaticOrderBitwise'
  verdicts tests-bitwise.txt
fi
if step search; then
  gtest_each 60 tests-search.txt 'SignalingGemmGpu.Search*'
  verdicts tests-search.txt
fi
if step configs; then
  for only in "kernel=pingpong-swap" "tile=128x144 cluster=2x1"; do
    KILN_TEST_GEMM_CONFIG="$only" capped 80 "tests-configs-${only%% *}.txt" \
      build/kiln_gpu_tests --gtest_filter=SignalingGemmGpu.EveryConfigurationMatchesCublas
    verdicts "tests-configs-${only%% *}.txt"
  done
fi
if step overlap; then
  gtest_each 110 tests-overlap.txt 'OverlapGpu.OneRank:OverlapContiguousRowsGpu.OneRank:TunerGpu.HostLaunchGeometryMatchesTheKernel'
  verdicts tests-overlap.txt
fi
pack
