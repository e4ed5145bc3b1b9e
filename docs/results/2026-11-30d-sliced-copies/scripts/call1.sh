#!/usr/bin/env bash
# 2026-11-30d call 1: 0c8badc (two operand copies under split-K, never run on a GPU) —
# EvolveGpu.MatmulSm90* (includes "two-copies-split-k"), the sliced two-copy probes on the
# K = 8192 products beside the set's kernels (2026-11-30c's next-calls.sh probes), then
# compute-sanitizer memcheck on a two-copy kernel (kb1-3, the set's) and a sliced one (kb1-2).
cd "$(dirname "$0")/../../../.." || exit 2
bash docs/results/2026-11-30c-direct-store/scripts/next-calls.sh probes
source scripts/device_env.sh > /dev/null 2>&1
mkdir -p "$OUT/memcheck"
S=evolve-set/versus-state/set
for pair in kb1-2-matmul=/tmp/probes/kb1-2-matmul--two-copies-sliced.cu \
            kb1-3-batched-matmul=evolve-set/calls/src1/kb1-3-batched-matmul--regen.cu \
            kb1-17-matmul-transposed-b=/tmp/probes/kb1-17-matmul-transposed-b--two-copies-sliced.cu; do
  [ $SECONDS -gt 500 ] && { echo "memcheck: out of time before $pair"; break; }
  p=${pair%%=*}; src=${pair#*=}; log=$OUT/memcheck/$p-$(basename ${src%.cu}).txt
  grep -o '"cutlass-sm90.copies":[0-9]' "$src" | head -1
  timeout 60 build/kiln bench candidate --problem $p --sizes small --source $src --reuse-builds \
    --build-dir /tmp/vsan --build-cache /tmp/vcache -w 1 -n 2 --trials 1 --timeout 50 > $log.build 2>&1
  timeout 120 compute-sanitizer --tool memcheck --target-processes all --report-api-errors no \
    build/kiln bench candidate --problem $p --sizes small --source $src --reuse-builds \
    --build-dir /tmp/vsan --build-cache /tmp/vcache -w 1 -n 2 --trials 1 --timeout 110 > $log 2>&1
  echo "memcheck $p $(basename $src): exit $? $(grep -h 'ERROR SUMMARY' $log | sort | uniq -c | tr '\n' ' ') $(grep -h '# candidate' $log | tail -1)"
done
tar -czf "$OUT/memcheck.tar.gz" -C "$OUT" memcheck && rm -rf "$OUT/memcheck"
