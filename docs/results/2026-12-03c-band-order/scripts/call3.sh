#!/usr/bin/env bash
# Call 3 of 2026-12-03c (issue 17), one H200: the band order's GPU tests at this session's HEAD.
# ClaimedTilesMatchTheStaticOrderBitwise (every ping-pong configuration: claimed products bitwise
# equal to static, tile tables equal to the host model, serpentine band 4 included);
# EveryConfigurationMatchesCublas on four ping-pong configurations (claimed and serpentine cases
# held to the model); the host launch geometry with claimed schedules; the search (claimed twins).
# Prepared: bash scripts/pack_carry.sh build/kiln_gpu_tests
# Device: run(command="bash docs/results/2026-12-03c-band-order/scripts/call3.sh", carry=["carry"])
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=${ARCHIVE:-call3}
steps="${STEPS:-bitwise configs geometry search}"; DEADLINE=${DEADLINE:-500}
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
if step bitwise; then
  gtest_each 150 bitwise.txt 'SignalingGemmGpu.ClaimedTilesMatchTheStaticOrderBitwise'
  grep -E "compared|differs|not the model|OK \]|FAILED|EXITED" "$out/bitwise.txt" | tee -a "$out/summary.txt"
fi
if step configs; then
  for c in "tile=128x144 cluster=2x1" "tile=192x128 cluster=1x2" "tile=144x128 cluster=1x2" "tile=128x128 cluster=1x2 kernel=pingpong"; do
    KILN_TEST_GEMM_CONFIG="$c" gtest_each 90 "configs-${c// /_}.txt" 'SignalingGemmGpu.EveryConfigurationMatchesCublas'
    grep -E "cases,|checked|FAILED|OK \]|EXITED|slot|model" "$out/configs-${c// /_}.txt" | head -8 | tee -a "$out/summary.txt"
  done
fi
if step geometry; then
  gtest_each 90 geometry.txt 'TunerGpu.HostLaunchGeometryMatchesTheKernel'
  grep -E "geometry|OK \]|FAILED|EXITED" "$out/geometry.txt" | head -8 | tee -a "$out/summary.txt"
fi
if step search; then
  gtest_each 150 search.txt 'SignalingGemmGpu.SearchRanksEveryCandidateAndRunsTheBest'
  grep -E "OK \]|FAILED|EXITED|twin" "$out/search.txt" | head -8 | tee -a "$out/summary.txt"
fi
pack
