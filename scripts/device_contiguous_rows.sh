#!/usr/bin/env bash
# Device run for ReduceScatter to contiguous row blocks (OverlapOptions::contiguous_rows, issue 22's
# "contiguous layout without giving back the speed") and the checks that ride along. Binaries
# prebuilt in build/ (carried). Steps:
#   tests      GPU tests: the new layout on 1, 2 and 4 ranks sharing the GPU, the wave layout's
#              regression tests, every signaling-GEMM configuration, the evolve engine's GPU tests
#   sanitizer  compute-sanitizer (memcheck, racecheck, synccheck) on `kiln overlap bench --op rs`,
#              which runs the block-cyclic and the contiguous layout of the same plan
#   bench      `kiln overlap bench -g 1 --op rs` with fixed plans: kiln (block-cyclic) against
#              kiln-cr (contiguous) and their GEMMs alone, interleaved in one process
# Writes /tmp/kiln-contiguous/c/ and packs it as $OUT/contiguous.tar.gz after every step.
# Usage: bash scripts/device_contiguous_rows.sh [tests] [sanitizer] [bench]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/device_env.sh
steps=${*:-tests sanitizer bench}
out=/tmp/kiln-contiguous/c; rm -rf "$out"; mkdir -p "$out"
archive=contiguous
source scripts/device_steps.sh
k=build/kiln
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv,noheader)"
note "binary: $(git log -1 --format=%h 2>/dev/null) (carried; git status there may differ)"

if step tests; then
  timed 300 tests.txt build/kiln_gpu_tests --gtest_filter="${TESTS:-OverlapContiguousRowsGpu.*:OverlapGpu.OneRank:OverlapGpu.TwoRanks:OverlapGpu.BadInputRaisesUsageErrors:SignalingGemmGpu.*:EvolveGpu.*}"
  grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \]|tests? ran" "$out/tests.txt" | tee -a "$out/summary.txt"
fi

if step sanitizer; then
  # SAN_PLANS (;-separated), SAN_SHAPE and TOOLS narrow it (racecheck is slow on big shapes).
  IFS=';' read -ra plans <<< "${SAN_PLANS:-tile=128x128 cap=8 raster=m swizzle=2 groups=each;tile=128x192 cluster=2x1 kernel=pingpong cap=8 raster=m signal=deferred groups=each}"
  for plan in "${plans[@]}"; do
    for tool in ${TOOLS:-memcheck racecheck synccheck}; do
      log="sanitizer-$tool-$(echo "$plan" | tr ' =' '_-' | cut -c1-40).txt"
      timed "${SAN_LIMIT:-100}" "$log" compute-sanitizer --tool $tool --report-api-errors no $k overlap bench -g 1 \
        --op rs --shape "${SAN_SHAPE:-1024x1000x256}" --plan "$plan" -w 1 -n 2 --rounds 1
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY|kiln-cr|^ *1024x" "$out/$log" | tail -3 | tee -a "$out/summary.txt"
    done
  done
fi

if step bench; then
  # Shapes of the issue's overlap set that split into whole tiles per rank, each with the
  # configuration the search chose for it on an H100 (docs/results/2026-11-24-gemm-configs/).
  while read -r shape plan; do
    timed 150 "bench-$shape.txt" $k overlap bench -g 1 --op rs --shape "$shape" --plan "$plan" \
      -w 5 -n 20 --rounds 4 --json "$out/bench-$shape.json"
    grep -E "^ *[0-9]+x[0-9]+x[0-9]+ " "$out/bench-$shape.txt" | tee -a "$out/summary.txt"
  done <<'PLANS'
8192x8192x8192 tile=128x192 cluster=2x1 kernel=pingpong raster=m swizzle=1
16384x8192x4096 tile=128x192 cluster=2x1 kernel=pingpong raster=n swizzle=1
4096x8192x2048 tile=128x128 cluster=1x2 kernel=pingpong raster=m swizzle=8
8192x4096x14336 tile=128x256 cluster=1x2 raster=m swizzle=8
8192x8192x2048 tile=128x192 cluster=2x1 kernel=pingpong raster=m swizzle=1
PLANS
fi
pack
