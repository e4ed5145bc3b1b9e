#!/usr/bin/env bash
# 2026-11-30d call 6: the KL divergence's fast-log (log of a ratio on the special-function unit; never
# run on a GPU): EvolveGpu.LossFamilyGeneratesCompilesAndIsJudged, the probes of probes6.txt beside
# the set's kernel at KernelBench's size
# (winner into the state), memcheck on a fast-log kernel; then the whole set against PyTorch
# eager in the same call where a probe won (the session's set figure).
cd "$(dirname "$0")/../../../.." || exit 2
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
head -1 carry/MANIFEST
mkdir -p "$OUT/logs" "$OUT/verdicts"
S=evolve-set/versus-state/set; P=/tmp/probes; C=/tmp/vcache; here=docs/results/2026-11-30d-sliced-copies/scripts
mkdir -p $P $C
while read -r p name genome; do
  build/kiln evolve generate --problem "$p" --genome "$genome" --out "$P/$p--$name.cu" > /dev/null ||
    echo "not generated: $p $name"
done < $here/probes6.txt
( ls $P/*.cu | while read -r f; do b=$(basename "$f" .cu); echo "${b%%--*} $f"; done |
    xargs -P 8 -L 1 sh -c 'build/kiln bench candidate --compile-only --reuse-builds --problem "$0" --source "$1" --build-dir /tmp/pbuild --build-cache /tmp/vcache > /dev/null 2>&1 || echo "compile failed: $1"'
  echo "compiled at ${SECONDS}s" ) > "$OUT/logs/compile.txt" 2>&1 &
compiler=$!
timeout 150 build/kiln_gpu_tests --gtest_filter='EvolveGpu.LossFamilyGeneratesCompilesAndIsJudged' > "$OUT/logs/gpu-tests.txt" 2>&1
echo "gpu tests exit $? at ${SECONDS}s"
grep -E "^\[  (PASSED|FAILED|  OK) |Failure|not accepted|rejected" "$OUT/logs/gpu-tests.txt" | head -20
wait $compiler; cat "$OUT/logs/compile.txt"
for p in $(ls $P | sed 's/--.*//' | sort -u); do
  cp "$S/$p/best.cu" "$P/$p--set.cu"
  srcs=(); for f in $P/$p--*.cu; do srcs+=(--source "$f"); done
  timeout 120 build/kiln bench candidate --reuse-builds --problem "$p" --sizes kb "${srcs[@]}" \
    --json-per-source --build-dir /tmp/pbuild --build-cache $C -w 3 -n 20 --trials 2 \
    --timeout 100 --timing guarded > "$OUT/logs/$p-judge.txt" 2>&1
  echo "$p judge exit $? at ${SECONDS}s"
  for f in $P/$p--*.cu; do j=${f%.cu}.json; [ -f "$j" ] && cp "$j" "$OUT/verdicts/" &&
    python3 scripts/verdict_rows.py "$j" "$(basename "${f%.cu}")" --width 44; done
  python3 scripts/pick_probe_winner.py "$P" "$p" "$S"
done | tee "$OUT/summary.txt"
src=$P/kb1-98-kl-div-loss--b256-v2-fl.cu; log=$OUT/logs/memcheck-b256-v2-fl.txt
timeout 90 compute-sanitizer --tool memcheck --target-processes all --report-api-errors no \
  build/kiln bench candidate --problem kb1-98-kl-div-loss --sizes small --source $src --reuse-builds \
  --build-dir /tmp/vsan --build-cache $C -w 1 -n 2 --trials 1 --timeout 80 > $log 2>&1
echo "memcheck $(basename $src): exit $? $(grep -h 'ERROR SUMMARY' $log | sort | uniq -c | tr '\n' ' ') $(grep -h '# candidate' $log | tail -1)" | tee -a "$OUT/summary.txt"
tar -cJf "$OUT/set-after.tar.xz" evolve-set/versus-state/set
# The whole set again only where a probe replaced the set's kernel (call 3 holds the figure else).
if grep -q " replaces " "$OUT/summary.txt"; then
  echo "versus from ${SECONDS}s"
  VERSUS_STATE=evolve-set/versus-state VERSUS_LIMIT=$((570 - SECONDS - 30)) bash scripts/device_set_versus.sh \
    > "$OUT/logs/versus-run.txt" 2>&1
  cat "$OUT/versus.md"
  python3 scripts/combine_eager_vs_evolved.py "$OUT/eager-vs-evolved.json" | tail -3
fi
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs verdicts && rm -rf "$OUT/logs" "$OUT/verdicts"
