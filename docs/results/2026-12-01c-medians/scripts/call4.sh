#!/usr/bin/env bash
# 2026-12-01c, call 4: compute-sanitizer memcheck on OverlapContiguousRowsGpu.OneRank and .TwoRanks
# (two ranks sharing the GPU; every rank process watched), which run the reorder's own-tile read
# by row_in_subtile for the 144-, 160- and 192-row plans (copy-engine plans at two ranks).
# Prepared on the CPU machine: ninja -C build -j2 kiln_gpu_tests;
#   bash scripts/pack_carry.sh build/kiln_gpu_tests
# Device: run(command="bash docs/results/2026-12-01c-medians/scripts/call4.sh", carry=["carry"],
#             timeout_s=480)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-call4c/c; rm -rf "$out"; mkdir -p "$out"; archive=call4
steps="${STEPS:-memcheck}"; DEADLINE=${DEADLINE:-440}
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
if step memcheck; then
  for t in TwoRanks OneRank; do
    KILN_TEST_RANKS_PER_GPU=2 capped 300 "memcheck-$t.txt" compute-sanitizer --tool memcheck \
      --target-processes all --report-api-errors no --error-exitcode 3 \
      build/kiln_gpu_tests --gtest_filter="OverlapContiguousRowsGpu.$t"
    grep -E "ERROR SUMMARY|^\[ +(OK|FAILED|PASSED) " "$out/memcheck-$t.txt" | tee -a "$out/summary.txt"
  done
fi
pack
