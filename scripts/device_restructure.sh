#!/usr/bin/env bash
# Device run for the restructure (issue 16): the same benchmarks from the binaries before the
# change (build-before/kiln, commit 138a294) and after it (build/kiln), alternated twice in one
# call so that both see the same clocks; every GPU test after the change (multi-rank tests with
# their ranks on the one GPU); the bugs the issue names (reduce bench across 2^31, --plan auto on
# two ranks). Writes /tmp/kiln-restructure/r/ and packs it as $OUT/restructure.tar.gz.
# Usage: bash scripts/device_restructure.sh [bench] [tests]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/device_env.sh >/dev/null
steps=${*:-bench tests}
out=/tmp/kiln-restructure/r; rm -rf "$out"; mkdir -p "$out"
final="${OUT:-out}"; mkdir -p "$final"
pack() { tar -czf "$final/restructure.tar.gz" -C "$(dirname "$out")" r; cp "$out/summary.txt" "$final/" 2>/dev/null; }
note() { echo "$*" | tee -a "$out/summary.txt"; }
step() { pack; [[ " $steps " == *" $1 "* ]] && note "== $1 $(date -u +%T)"; }
timed() {
  local limit=$1 log=$2; shift 2
  local start=$SECONDS
  timeout "$limit" "$@" > "$out/$log" 2>&1
  local code=$?
  note "$log: exit $code in $((SECONDS - start)) s"
  return $code
}
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

if step tests; then
  timed 560 gpu_tests.txt build/kiln_gpu_tests
  grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED|SHARED) |tests ran" "$out/gpu_tests.txt" | grep -v SHARED | tee -a "$out/summary.txt"
fi
pack
