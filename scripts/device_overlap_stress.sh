#!/usr/bin/env bash
# Device run for issue 18's stress test and the rest of its list, on one GPU with the ranks
# sharing it. Binaries come compressed in carry/ (git-ignored; made on the CPU machine by
# `bash scripts/pack_carry.sh build/kiln build/kiln_gpu_tests build-mutant-d1/kiln_gpu_tests
# build-mutant-d3/kiln_gpu_tests build-before/kiln`, optionally build-presession/kiln): build/kiln,
# build/kiln_gpu_tests, two mutants of the test binary (the fix of defect 1 or of defect 3 taken out again, which the stress test must catch)
# and an older kiln (build-before/kiln) for the overlap bench's before/after.
# Writes /tmp/kiln-stress/s/ and packs it as $OUT/stress.tar.gz.
# Usage: bash scripts/device_overlap_stress.sh [calibrate] [mutants] [tests] [stress] [candidates]
#          [sanitizer] [bench]
#   STRESS_RUNS (default 1000): runs per configuration in the stress step.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
steps=${*:-calibrate mutants tests stress sanitizer bench}
out=/tmp/kiln-stress/s; rm -rf "$out"; mkdir -p "$out"
archive=stress
source scripts/device_steps.sh

# Unpack the carried binaries (packed by scripts/pack_carry.sh).
bash scripts/unpack_carry.sh >/dev/null
source scripts/device_env.sh >/dev/null
note "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
note "kiln: $(build/kiln --version)  before: $(build-before/kiln --version)"
export KILN_TEST_RANKS_PER_GPU=4
summarize() { grep -E "^\[       OK|^\[  FAILED|^\[  PASSED|^\[  SKIPPED|STRESS|differ|did not|rank [0-9]+, " "$out/$1" | head -${2:-60} | tee -a "$out/summary.txt"; }

if step calibrate; then
  KILN_STRESS_RUNS=40 timed 300 stress-40.txt build/kiln_gpu_tests --gtest_filter='OverlapStressGpu.*'
  summarize stress-40.txt 80
fi

if step mutants; then
  # Defect 3 taken out (AllReduce by copy engines sums its own part first): bitwise mismatches.
  KILN_STRESS_RUNS=8 timed 200 mutant-d3.txt build-mutant-d3/kiln_gpu_tests --gtest_filter='OverlapStressGpu.ThreeRanks'
  summarize mutant-d3.txt
  # Defect 1 taken out (epochs committed before the GEMM launch): run 17 throws, run 18 waits for
  # signals that never come; GemmCollective::wait reports it after its 60 s.
  KILN_STRESS_RUNS=24 timed 200 mutant-d1.txt build-mutant-d1/kiln_gpu_tests --gtest_filter='OverlapStressGpu.TwoRanks'
  summarize mutant-d1.txt
fi

if step tests; then
  timed 560 tests.txt build/kiln_gpu_tests \
    --gtest_filter='OverlapGpu.*:CandidateGpu.*:SignalingGemmGpu.*:NvlinkCollectivesGpu.*'
  summarize tests.txt 80
fi

# STRESS_WORLDS (default "TwoRanks FourRanks ThreeRanks"), STRESS_ONLY (a configuration-name
# filter, KILN_STRESS_ONLY) and STRESS_TAG (a log-name suffix) split the stress over calls.
if step stress; then
  for world in ${STRESS_WORLDS:-TwoRanks FourRanks ThreeRanks}; do
    log="stress-$world${STRESS_TAG:-}.txt"
    KILN_STRESS_ONLY=${STRESS_ONLY:-} KILN_STRESS_RUNS=${STRESS_RUNS:-1000} timed 590 "$log" \
      build/kiln_gpu_tests --gtest_filter="OverlapStressGpu.$world"
    summarize "$log" 40
  done
fi

if step injection; then
  # compute-sanitizer reaches the forked ranks through the environment CUDA reads at cuInit.
  compute-sanitizer --tool memcheck env 2>&1 | grep -E "CUDA_INJECTION|LD_PRELOAD" | tee -a "$out/summary.txt"
fi

if step extra; then
  timed 120 lost-peer.txt build/kiln_gpu_tests --gtest_filter='OverlapGpu.LostCopyEnginePeer*'
  summarize lost-peer.txt
  grep -E "expected:" "$out/lost-peer.txt" | tee -a "$out/summary.txt"
  # The candidate test that every row skipped is not accepted, against the older kiln: must fail.
  mkdir -p build-oldjudge && cp build-before/kiln build/kiln_gpu_tests build-oldjudge/
  timed 120 nothing-judged-old-kiln.txt build-oldjudge/kiln_gpu_tests \
    --gtest_filter='CandidateGpu.NothingJudgedIsNotAccepted'
  summarize nothing-judged-old-kiln.txt
fi

if step candidates; then
  timed 200 candidates.txt build/kiln_gpu_tests --gtest_filter='CandidateGpu.*'
  summarize candidates.txt
fi

if step sanitizer; then
  KILN_STRESS_RUNS=4 timed 300 sanitizer-memcheck-stress.txt compute-sanitizer --tool memcheck \
    --target-processes all --report-api-errors no --kernel-name-exclude kns=ncclDevKernel \
    build/kiln_gpu_tests --gtest_filter='OverlapStressGpu.TwoRanks'
  grep -E "ERROR SUMMARY|^\[       OK|^\[  FAILED" "$out/sanitizer-memcheck-stress.txt" | tee -a "$out/summary.txt"
  KILN_STRESS_RUNS=4 timed 300 sanitizer-racecheck-stress.txt compute-sanitizer --tool racecheck \
    --target-processes all --kernel-name-exclude kns=ncclDevKernel \
    build/kiln_gpu_tests --gtest_filter='OverlapStressGpu.TwoRanks'
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^\[       OK|^\[  FAILED" "$out/sanitizer-racecheck-stress.txt" | tee -a "$out/summary.txt"
fi

if step bench; then
  # One rank, a fixed plan, the older and the current kiln taking turns (issue 18: the overlap
  # figures unchanged within the spread).
  # BENCH_ORDER reverses who goes first (the second of a pair runs on a hotter GPU).
  for round in 1 2; do
    for who in ${BENCH_ORDER:-before current}; do
      bin=build/kiln; [ "$who" = before ] && bin=build-before/kiln
      [ "$who" = presession ] && bin=build-presession/kiln
      for op in ar rs; do
        timed 80 "bench-$op-$who-$round.txt" "$bin" overlap bench -g 1 --op $op \
          --shape 4096x8192x2048 --shape 8192x8192x8192 \
          --plan "tile=128x256 cap=0 swizzle=4 groups=each" -w 10 -n 30 --rounds 3 \
          --json "$out/bench-$op-$who-$round.json"
        note "  after $who $op: $(nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader)"
      done
    done
  done
fi
pack
