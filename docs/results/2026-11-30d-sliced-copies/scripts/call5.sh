#!/usr/bin/env bash
# 2026-11-30d call 5: warp-row-separable pooling with `consecutive` outputs a lane (a register copy
# of the lane's input columns, the slice padded a word in 33, the outputs stored through it; never
# run on a GPU): EvolveGpu.PoolingWarpRowSeparableIsJudged, the set's four warp-row genomes
# regenerated ("same") and with consecutive outputs at several widths (probes5.txt) beside the
# set's kernels at KernelBench's size (winners into the state), memcheck on two consecutive kernels.
cd "$(dirname "$0")/../../../.." || exit 2
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
head -1 carry/MANIFEST
mkdir -p "$OUT/logs" "$OUT/verdicts"
S=evolve-set/versus-state/set; P=/tmp/probes; C=/tmp/vcache; here=docs/results/2026-11-30d-sliced-copies/scripts
mkdir -p $P $C
while read -r p name genome; do
  build/kiln evolve generate --problem "$p" --genome "$genome" --out "$P/$p--$name.cu" > /dev/null ||
    echo "not generated: $p $name"
done < $here/probes5.txt
( ls $P/*.cu | while read -r f; do b=$(basename "$f" .cu); echo "${b%%--*} $f"; done |
    xargs -P 12 -L 1 sh -c 'build/kiln bench candidate --compile-only --reuse-builds --problem "$0" --source "$1" --build-dir /tmp/pbuild --build-cache /tmp/vcache > /dev/null 2>&1 || echo "compile failed: $1"'
  echo "compiled at ${SECONDS}s" ) > "$OUT/logs/compile.txt" 2>&1 &
compiler=$!
timeout 200 build/kiln_gpu_tests --gtest_filter='EvolveGpu.PoolingWarpRowSeparableIsJudged' > "$OUT/logs/gpu-tests.txt" 2>&1
echo "gpu tests exit $? at ${SECONDS}s"
grep -E "^\[  (PASSED|FAILED|  OK) |Failure|not accepted|rejected" "$OUT/logs/gpu-tests.txt" | head -20
wait $compiler; cat "$OUT/logs/compile.txt"
for p in $(ls $P | sed 's/--.*//' | sort -u); do
  cp "$S/$p/best.cu" "$P/$p--set.cu"
  srcs=(); for f in $P/$p--*.cu; do srcs+=(--source "$f"); done
  timeout 120 build/kiln bench candidate --reuse-builds --problem "$p" --sizes kb "${srcs[@]}" \
    --json-per-source --build-dir /tmp/pbuild --build-cache $C -w 3 -n 10 --trials 2 \
    --timeout 110 --timing guarded > "$OUT/logs/$p-judge.txt" 2>&1
  echo "$p judge exit $? at ${SECONDS}s"
  for f in $P/$p--*.cu; do j=${f%.cu}.json; [ -f "$j" ] && cp "$j" "$OUT/verdicts/" &&
    python3 scripts/verdict_rows.py "$j" "$(basename "${f%.cu}")" --width 44; done
  python3 scripts/pick_probe_winner.py "$P" "$p" "$S"
done | tee "$OUT/summary.txt"
for src in $P/kb1-44-avgpool-1d--cons-o16-w4.cu $P/kb1-41-maxpool-1d--cons-o16-w16.cu; do
  [ $SECONDS -gt 500 ] && { echo "memcheck: out of time before $src"; break; }
  b=$(basename ${src%.cu}); p=${b%%--*}; log=$OUT/logs/memcheck-$b.txt
  timeout 70 compute-sanitizer --tool memcheck --target-processes all --report-api-errors no \
    build/kiln bench candidate --problem $p --sizes small --source $src --reuse-builds \
    --build-dir /tmp/vsan --build-cache $C -w 1 -n 2 --trials 1 --timeout 60 > $log 2>&1
  echo "memcheck $b: exit $? $(grep -h 'ERROR SUMMARY' $log | sort | uniq -c | tr '\n' ' ') $(grep -h '# candidate' $log | tail -1)"
done | tee -a "$OUT/summary.txt"
tar -cJf "$OUT/set-after.tar.xz" evolve-set/versus-state/set
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs verdicts && rm -rf "$OUT/logs" "$OUT/verdicts"
