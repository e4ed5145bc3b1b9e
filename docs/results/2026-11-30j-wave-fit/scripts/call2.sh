#!/usr/bin/env bash
# Call 2 of 2026-11-30j (issue 17), one H200: call 1's EveryConfigurationMatchesCublas did not
# finish in 170 s (93 s for the 19 configurations before 128x144). Each 128x144 kernel on the
# test's shapes, dtypes and layouts, one process each under a 20 s limit, to find the case that
# hangs; then the test itself under a longer limit with the rest of the search tests.
# Device: run(command="bash docs/results/2026-11-30j-wave-fit/scripts/call2.sh", carry=["carry"])
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-call2/c; rm -rf "$out"; mkdir -p "$out"; archive=call2
steps="${STEPS:-probe tests}"; DEADLINE=${DEADLINE:-330}
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
if step probe; then
  for cluster in 2x1 1x2; do
    for layout in nk kn; do
      for dtype in bf16 fp16; do
        for shape in 300x264x136 3100x6200x128; do
          capped 20 "probe-$cluster-$layout-$dtype-$shape.txt" build/kiln overlap gemm --shape "$shape" \
            --config "tile=128x144 cluster=$cluster kernel=pingpong" --layout "$layout" -d "$dtype" \
            -w 1 -n 2 --rounds 1 --caps 6
          grep -E "correctness|error" "$out/probe-$cluster-$layout-$dtype-$shape.txt" | head -2 | tee -a "$out/summary.txt"
        done
      done
    done
  done
fi
if step tests; then
  gtest_each 200 tests-search.txt 'SignalingGemmGpu.SearchRanksEveryCandidateAndRunsTheBest:SignalingGemmGpu.SearchTimesTheBalancedCapUnderSustainedLoad:TunerGpu.HostLaunchGeometryMatchesTheKernel:LaunchGeometryGpu.*'
  grep -E "^\[ +(OK|FAILED|PASSED|EXITED) |cap|ranked|stage" "$out/tests-search.txt" | tee -a "$out/summary.txt"
fi
pack
