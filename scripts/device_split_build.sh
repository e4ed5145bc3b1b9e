#!/usr/bin/env bash
# One GPU: the split build of generated kernels (issue 20's compile speed; src/bench/split_build.*)
# and the one-rank tests of the deferred NCCL communicators (3dd533e). Steps, in the order given,
# all under one deadline (DEADLINE s, default 560), packed after each into $OUT/$ARCHIVE.tar.gz:
#   onerank    the one-rank paths that call NCCL and the candidate judge's tests (ONERANK_TESTS)
#   split      the split build's own GPU test (SplitBuildGpu.*: outputs against the whole build,
#              argument sizes checked)
#   tests      the engine's per-family tests, each genome built whole and judged alone, then built
#              split and judged by the judge server (SPLIT_TESTS; TESTS_LIMIT s, default 300)
#   sanitize   compute-sanitizer memcheck on SplitBuildGpu.* (a split-built library's launches)
# The engine's speed with split builds against nvcc: scripts/device_evolve_quality.sh speed/speedset.
# Usage: bash scripts/device_split_build.sh [step ...]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[ -d carry ] && bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null
steps=${*:-onerank split sanitize tests}
archive=${ARCHIVE:-split}
out=/tmp/kiln-split/$archive; rm -rf "$out"; mkdir -p "$out"
source scripts/device_steps.sh
note "device_split_build: $steps on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) at $(date -u +%FT%TZ)"
[ -f carry/MANIFEST ] && head -1 carry/MANIFEST | sed 's/^/carry: /' | tee -a "$out/summary.txt"
verdicts() { grep -E "^\[ +(OK|FAILED|SKIPPED|EXITED [0-9]+) +\]" "$out/$1" | sort -u | tee -a "$out/summary.txt"; }

if step onerank; then
  gtest_each 150 onerank.txt "${ONERANK_TESTS:-CollectivesGpu.OneRank:ChunkedReduceScatterGpu.MatchesCublasAndNcclOneRank:AutomaticPlanGpu.OneRank:OverlapGpu.OneRank:CandidateGpu.*}"
  verdicts onerank.txt
fi
if step split; then
  gtest_each 120 split.txt "SplitBuildGpu.*"
  verdicts split.txt
  grep -E "^n as" "$out/split.txt" | tee -a "$out/summary.txt"
fi
if step sanitize; then
  gtest_each 150 sanitize.txt "SplitBuildGpu.*" \
    compute-sanitizer --tool memcheck --target-processes all --report-api-errors no
  grep -E "ERROR SUMMARY|^\[ +(OK|FAILED|EXITED [0-9]+) +\]" "$out/sanitize.txt" | tee -a "$out/summary.txt"
fi
if step tests; then
  gtest_each "${TESTS_LIMIT:-300}" tests.txt "${SPLIT_TESTS:-EvolveGpu.*-EvolveGpu.Matmul*:EvolveGpu.Attention*}"
  verdicts tests.txt
  grep -E "^(kb1-|reduce-sum)" "$out/tests.txt" | tee -a "$out/summary.txt" > /dev/null
fi
pack
