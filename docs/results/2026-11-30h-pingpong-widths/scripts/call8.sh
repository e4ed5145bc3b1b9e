#!/usr/bin/env bash
# Call 8 of 2026-11-30h (issue 17), one H200: slot_matrix_row without the 64-bit division
# (commit after f1e6ca3) on the GPU: every configuration against cuBLAS, the overlap runtime's
# one-, two- and four-rank tests (ReduceScatter subtiles: the rows the division used to compute;
# ranks share the one GPU), then call 5's 128x176 timing once more (kiln vs its CUTLASS twin).
# Prepared here: ninja -C build -j2 kiln kiln_gpu_tests;
#   bash scripts/pack_carry.sh build/kiln build/kiln_gpu_tests; carry ["carry"].
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null; head -1 carry/MANIFEST
source scripts/device_env.sh > /dev/null 2>&1
OUT=${OUT:-out}; mkdir -p "$OUT"
timeout 130 build/kiln_gpu_tests --gtest_filter='SignalingGemmGpu.EveryConfigurationMatchesCublas' > "$OUT/tests-configs.txt" 2>&1
echo "configs: exit $? at ${SECONDS}s"; grep -E "^\[ +(OK|FAILED|PASSED) " "$OUT/tests-configs.txt"
KILN_TEST_RANKS_PER_GPU=4 timeout 120 build/kiln_gpu_tests --gtest_filter='OverlapGpu.OneRank:OverlapGpu.TwoRanks:OverlapGpu.FourRanks' > "$OUT/tests-overlap.txt" 2>&1
echo "overlap: exit $? at ${SECONDS}s"; grep -E "^\[ +(OK|FAILED|PASSED) |SKIPPED" "$OUT/tests-overlap.txt"
timeout 60 build/kiln overlap gemm --shape 16384x16384x2048 --shape 4096x8192x2048 \
  --config "tile=128x176 cluster=2x1 kernel=pingpong" --caps 132 --rounds 6 -n 20 \
  --json "$OUT/overlap-gemm-128x176.json" > "$OUT/overlap-gemm-128x176.txt" 2>&1
echo "overlap gemm: exit $? at ${SECONDS}s"; cut -c1-120 "$OUT/overlap-gemm-128x176.txt"
