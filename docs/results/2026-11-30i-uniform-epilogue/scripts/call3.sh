#!/usr/bin/env bash
# Call 3 of 2026-11-30i (issue 17), one H200: the overlap runtime's multi-rank tests on the new
# epilogue (ranks sharing the one GPU): the stress test (late, out-of-order signals), contiguous
# row blocks (ping-pong with deferred signals) and OverlapGpu.FourRanks; then, for four shapes
# where call 2's two bf16 runs picked different configurations (or lost to cuBLAS by more than
# 2%), the search's two picks timed against each other in the same rounds (--plan / --second-plan).
# Prepared on the CPU machine: the binaries of call 2 (a7107dc) and scripts/torch_gemm_same_process.py
# with --second-plan. Device: run(command="bash docs/results/2026-11-30i-uniform-epilogue/scripts/call3.sh",
#             carry=["carry"], timeout_s=600)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-call3/c; rm -rf "$out"; mkdir -p "$out"; archive=call3
steps="picks tests"; DEADLINE=575
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
pp="cluster=2x1 kernel=pingpong"
if step picks; then
  i=0
  while IFS='|' read -r shape first second; do
    i=$((i + 1))
    capped 60 "picks-$i.txt" python3 scripts/torch_gemm_same_process.py --dtype bf16 --shape "$shape" \
      --plan "$first" --second-plan "$second" --rounds 10 --json "$out/picks-$i.json"
    grep -v "^#" "$out/picks-$i.txt" | cut -c1-250 | tee -a "$out/summary.txt"
  done <<PICKS
16384x4096x3584|tile=128x192 cluster=1x2 kernel=pingpong raster=n swizzle=1|tile=128x192 cluster=1x2 kernel=pingpong raster=n swizzle=16
8192x8192x7168|tile=128x320 cluster=2x1 kernel=coop-n raster=m swizzle=2|tile=128x192 cluster=1x2 kernel=pingpong raster=n swizzle=1
4096x8192x8192|tile=128x160 cluster=1x2 kernel=pingpong raster=n swizzle=16|tile=256x128 cluster=2x1 kernel=coop raster=m swizzle=16
16384x16384x2048|tile=128x192 $pp raster=m swizzle=2|tile=128x192 $pp raster=n swizzle=2
4096x8192x2048|tile=128x160 $pp raster=m swizzle=1|tile=128x128 $pp raster=n swizzle=8
PICKS
fi
if step tests; then
  export KILN_TEST_RANKS_PER_GPU=4
  gtest_each 330 tests-overlap.txt \
    'OverlapStressGpu.TwoRanks:OverlapContiguousRowsGpu.OneRank:OverlapContiguousRowsGpu.TwoRanks:OverlapGpu.FourRanks'
  grep -E "^\[ +(OK|FAILED|PASSED|EXITED)|SKIPPED" "$out/tests-overlap.txt" | tee -a "$out/summary.txt"
fi
pack
