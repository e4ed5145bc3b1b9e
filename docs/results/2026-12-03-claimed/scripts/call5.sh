#!/usr/bin/env bash
# Call 5 of 2026-12-03 (issue 17), one H200: claimed tiles against the static order, bitwise, for
# every ping-pong configuration (no cuBLAS in the process), then the same test under racecheck for
# a ping-pong and a ping-pong-swap configuration, kernel filter on the claimed kernels (calls 2-4:
# racecheck cannot run past cuBLAS's kernels on this device).
# Prepared: ninja -C build -j2 kiln_gpu_tests; bash scripts/pack_carry.sh build/kiln_gpu_tests
# Device: run(command="bash docs/results/2026-12-03-claimed/scripts/call5.sh", carry=["carry"], timeout_s=300)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=${ARCHIVE:-call5}
steps="${STEPS:-bitwise racecheck}"; DEADLINE=${DEADLINE:-170}
source scripts/device_steps.sh
note "binary: $(cat carry/MANIFEST)"
test=SignalingGemmGpu.ClaimedTilesMatchTheStaticOrderBitwise
if step bitwise; then
  capped 40 bitwise.txt build/kiln_gpu_tests --gtest_filter=$test
  grep -E "compared|differs|non-finite|^\[ +(OK|FAILED) " "$out/bitwise.txt" | tee -a "$out/summary.txt"
fi
if step racecheck; then
  for config in "tile=128x144 cluster=2x1" "tile=144x128 cluster=1x2"; do
    tag=$(echo "$config" | cut -d' ' -f1 | tr = -)
    KILN_TEST_GEMM_CONFIG="$config" capped 60 "racecheck-$tag.txt" compute-sanitizer --tool racecheck \
      --kernel-name kns=ClaimedTileScheduler --print-limit 100 build/kiln_gpu_tests --gtest_filter=$test
    grep -E "RACECHECK SUMMARY|Sanitizer Error|compared|^\[ +(OK|FAILED) " "$out/racecheck-$tag.txt" | tee -a "$out/summary.txt"
  done
fi
pack
