#!/usr/bin/env bash
# Call 2 of 2026-12-03d (issue 17), one H200: the pieced store boxes' GPU tests
# (EveryConfigurationMatchesCublas on every pieced configuration, a 64-column and a swapped one,
# whose staging now also goes through store_staging_byte). The main-loop clock records planned
# here ran in call 3 (call3.sh's `trace` step): with the GPU tests the carry exceeds what the tree
# leaves of 64 MiB.
# Prepared: bash scripts/pack_carry.sh build/kiln_gpu_tests
# Device: run(command="STEPS=configs bash docs/results/2026-12-03d-pieced-boxes/scripts/call2.sh", carry=["carry"])
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=${ARCHIVE:-call2}
steps="${STEPS:-configs}"; DEADLINE=${DEADLINE:-500}
source scripts/device_steps.sh
note "binary: $(cat carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
if step configs; then
  for c in x144 x160 x176 x320 "tile=128x128 cluster=2x1 kernel=pingpong" "tile=144x128"; do
    KILN_TEST_GEMM_CONFIG="$c" gtest_each 45 "configs-${c// /_}.txt" 'SignalingGemmGpu.EveryConfigurationMatchesCublas'
    grep -E "checking|cases,|FAILED|OK \]|EXITED|slot|model" "$out/configs-${c// /_}.txt" | head -6 | tee -a "$out/summary.txt"
  done
fi
pack
