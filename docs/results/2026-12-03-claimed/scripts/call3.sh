#!/usr/bin/env bash
# Call 3 of 2026-12-03 (issue 17), one H200: the GPU tests of the claimed-tile option — every
# ping-pong configuration against cuBLAS with and without claimed tiles (KILN_TEST_GEMM_CONFIG
# selects them; a line per configuration shows how far a capped run got), the two search tests,
# and the one-rank overlap tests (default plans: unchanged kernels).
# Prepared: ninja -C build -j2 kiln_gpu_tests; bash scripts/pack_carry.sh build/kiln_gpu_tests
# Device: run(command="bash docs/results/2026-12-03-claimed/scripts/call3.sh", carry=["carry"], timeout_s=600)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=${ARCHIVE:-call3}
steps="${STEPS:-racecheck search configs overlap}"; DEADLINE=${DEADLINE:-585}
source scripts/device_steps.sh
note "binary: $(cat carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
verdicts() { grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED|EXITED) |cases, [0-9]+ failed|expected|checking" "$out/$1" | tee -a "$out/summary.txt"; }
if step racecheck; then  # the claimed kernels only (call 2's python route tripped the sanitizer in cuBLAS)
  KILN_TEST_GEMM_CONFIG="${RACE_CONFIG:-tile=128x144 cluster=2x1}" capped ${RACE_LIMIT:-120} racecheck.txt compute-sanitizer \
    --tool racecheck --kernel-name kns=ClaimedTileScheduler --print-limit 100 \
    build/kiln_gpu_tests --gtest_filter=SignalingGemmGpu.EveryConfigurationMatchesCublas
  grep -E "RACECHECK SUMMARY|cases, [0-9]+ failed|^\[ +(OK|FAILED) " "$out/racecheck.txt" | tee -a "$out/summary.txt"
fi
if step search; then
  gtest_each 150 tests-search.txt 'SignalingGemmGpu.Search*'
  verdicts tests-search.txt
fi
if step configs; then
  KILN_TEST_GEMM_CONFIG="${CONFIGS:-kernel=pingpong}" capped 300 tests-configs.txt \
    build/kiln_gpu_tests --gtest_filter=SignalingGemmGpu.EveryConfigurationMatchesCublas
  verdicts tests-configs.txt
fi
if step overlap; then
  gtest_each ${OVERLAP_LIMIT:-90} tests-overlap.txt 'OverlapGpu.OneRank:OverlapContiguousRowsGpu.OneRank:TunerGpu.HostLaunchGeometryMatchesTheKernel'
  verdicts tests-overlap.txt
fi
pack
