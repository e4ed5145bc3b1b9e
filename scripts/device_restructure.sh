#!/usr/bin/env bash
# Device run for the restructure (issue 16): the same benchmarks from the binaries before the
# change (build-before/kiln, commit 138a294) and after it (build/kiln), alternated twice in one
# call so that both see the same clocks; every GPU test after the change (multi-rank tests with
# their ranks on the one GPU); the bugs the issue names (reduce bench across 2^31, --plan auto on
# two ranks). Writes /tmp/kiln-restructure/r/ and packs it as $OUT/restructure.tar.gz.
# Usage: bash scripts/device_restructure.sh [bench] [smoke] [final] [tests]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/device_env.sh >/dev/null
steps=${*:-bench tests}
out=/tmp/kiln-restructure/r; rm -rf "$out"; mkdir -p "$out"
archive=restructure
source scripts/device_steps.sh
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader)"

if step bench; then
  for round in 1 2; do
    for which in before after; do
      bin=build/kiln; [ $which = before ] && bin=build-before/kiln
      timed 120 "reduce-$which-$round.txt" $bin reduce bench --op sum -d int32 --sizes 1e6,1e8,1e9 \
        --variants vec v4 --json "$out/reduce-$which-$round.json"
      timed 120 "gemm-$which-$round.txt" $bin overlap gemm --shape 4096x8192x8192 \
        --shape 16384x8192x4096 --json "$out/gemm-$which-$round.json"
    done
  done
  for which in before after; do
    bin=build/kiln; [ $which = before ] && bin=build-before/kiln
    timed 120 "suite-shared-$which.txt" $bin bench suite -g 2 --ranks-per-gpu 2 --problems '*' \
      --sizes 16K,4M/16,1Kx32K,4096x8192x2048,S1K-h32,decode -w 1 -n 3 --trials 3 --json "$out/suite-shared-$which.json"
    grep -E "^# correctness" "$out/suite-shared-$which.txt" | sed "s/^/  $which: /" | tee -a "$out/summary.txt"
  done
  timed 120 reduce-across-2to31.txt build/kiln reduce bench --op sum -d int32 --sizes 10000013,3e9
  tail -4 "$out/reduce-across-2to31.txt" | tee -a "$out/summary.txt"
  timed 120 overlap-auto-shared.txt build/kiln overlap bench -g 2 --ranks-per-gpu 2 --op rs \
    --shape 2048x4096x1024 --plan auto -w 1 -n 3 --rounds 1
  grep -E "plan from|correctness" "$out/overlap-auto-shared.txt" | tee -a "$out/summary.txt"
fi

if step smoke; then
  # Every benchmark subcommand from the final binary, small, correctness checked.
  timed 60 smoke-collective.txt build/kiln bench collective -g 2 --ranks-per-gpu 2 -o allreduce -b 1K -e 1M -f 32 -w 1 -n 3 -c 1
  grep -E "Wrong" "$out/smoke-collective.txt" | tee -a "$out/summary.txt"
  for plan in "tile=128x256 cap=120 comm=nccl groups=each" "tile=128x256 cap=0 comm=ce groups=each"; do
    timed 90 "smoke-overlap-${plan##*comm=}.txt" build/kiln overlap bench -g 2 --ranks-per-gpu 2 --op ar \
      --shape 2048x4096x1024 --plan "$plan" -w 1 -n 3 --rounds 1
    grep -E "correctness" "$out/smoke-overlap-${plan##*comm=}.txt" | tee -a "$out/summary.txt"
  done
  timed 60 smoke-reduce.txt build/kiln reduce bench --sizes 1e6,1e8 --variants vec
  grep -E "correctness" "$out/smoke-reduce.txt" | tee -a "$out/summary.txt"
  timed 60 smoke-gemm.txt build/kiln overlap gemm --shape 4096x8192x8192
  grep -E "correctness" "$out/smoke-gemm.txt" | tee -a "$out/summary.txt"
  timed 150 smoke-suite-g4.txt build/kiln bench suite -g 4 --ranks-per-gpu 4 --problems '*' \
    --sizes 16K,4M/16,1Kx32K,4096x8192x2048,S1K-h32,decode -w 1 -n 3 --trials 2
  grep -E "^# correctness|^# over" "$out/smoke-suite-g4.txt" | tee -a "$out/summary.txt"
  for c in allgather_pull cheat_half_output; do
    timed 120 "smoke-candidate-$c.txt" build/kiln bench candidate --problem allgather --source "tests/candidates/$c.cu" \
      -g 2 --ranks-per-gpu 2 --sizes 64K --timeout 20
    grep -E "^# candidate" "$out/smoke-candidate-$c.txt" | tee -a "$out/summary.txt"
  done
  env RANK=0 WORLD_SIZE=2 KILN_RANKS_PER_GPU=2 build/kiln tune profile > "$out/smoke-tune-shared.txt" 2>&1; note "tune profile with KILN_RANKS_PER_GPU=2: exit $? $(head -1 "$out/smoke-tune-shared.txt")"
  for r in 0 1; do
    env RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r NCCL_COMM_ID=127.0.0.1:29455 timeout 60 build/kiln bench collective \
      -b 1M -e 1M -w 1 -n 2 --timeout 20 > "$out/smoke-duplicate-rank$r.txt" 2>&1 &
  done
  wait
  note "two ranks on one GPU without KILN_RANKS_PER_GPU: $(grep -h error "$out"/smoke-duplicate-rank0.txt | head -1)"
fi

if step final; then
  # The commands the last thin-CLI commits touched, once more, with their result files.
  timed 60 final-collective.txt build/kiln bench collective -g 2 --ranks-per-gpu 2 -o allgather -b 1K -e 1M -f 32 -w 1 -n 3 -c 1 --json "$out/final-collective.json"
  grep -E "Wrong" "$out/final-collective.txt" | tee -a "$out/summary.txt"
  timed 90 final-suite.txt build/kiln bench suite -g 2 --ranks-per-gpu 2 --problems 'all*,moe*' --sizes 16K,decode -w 1 -n 3 --trials 2 --json "$out/final-suite.json"
  grep -E "^# correctness" "$out/final-suite.txt" | tee -a "$out/summary.txt"
  timed 200 final-tune-profile.txt build/kiln tune profile -g 1 --op ar --shape 2048x4096x2048 --points-per-octave 1 --rounds 2 --no-cache --out "$out/final-profile.json"
  grep -E "curves|predicted plans|wrote" "$out/final-tune-profile.txt" | tee -a "$out/summary.txt"
  timed 60 final-overlap-gemm.txt build/kiln overlap gemm --shape 2048x4096x2048 --json "$out/final-gemm.json"
  grep -E "correctness" "$out/final-overlap-gemm.txt" | tee -a "$out/summary.txt"
fi

if step tests; then
  timed 560 gpu_tests.txt build/kiln_gpu_tests
  grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED|SHARED) |tests ran" "$out/gpu_tests.txt" | grep -v SHARED | tee -a "$out/summary.txt"
fi
pack
