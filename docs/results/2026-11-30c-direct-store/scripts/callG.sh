#!/usr/bin/env bash
# 2026-11-30c call G: two operand copies read in three k-phases. EvolveGpu.MatmulSm90* (two copies on
# every product, size small) while the probes compile; then the
# probes judged beside the set's kernel (guarded, kb); a probe more than 2% above the set's U
# replaces its best.cu (the state comes back as set-after.tar.xz for the versus call).
cd "$(dirname "$0")/../.." || exit 2
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
head -1 carry/MANIFEST
mkdir -p $OUT/logs $OUT/verdicts /tmp/vcache/units
S=evolve-set/versus-state/set; P=evolve-set/calls/srcG
tar -xJf evolve-set/versus-state/units.tar.xz -C /tmp/vcache/units
( ls $P/*.cu | while read -r f; do b=$(basename $f .cu); echo "${b%%--*} $f"; done |
  xargs -P 8 -L 1 sh -c 'build/kiln bench candidate --compile-only --reuse-builds --problem "$0" --source "$1" --build-dir /tmp/pbuild --build-cache /tmp/vcache > /dev/null 2>&1 || echo "compile failed: $1"'
  echo "probes compiled at ${SECONDS}s" ) > $OUT/logs/compile.txt 2>&1 &
compiler=$!
timeout 280 build/kiln_gpu_tests --gtest_filter='EvolveGpu.MatmulSm90*' > $OUT/logs/gpu-tests.txt 2>&1
echo "gpu tests exit $? at ${SECONDS}s"
grep -E "^\[  (PASSED|FAILED|  OK) |Failure|not accepted|rejected" $OUT/logs/gpu-tests.txt | head -20
wait $compiler; cat $OUT/logs/compile.txt
for p in $(ls $P | sed 's/--.*//' | sort -u); do
  [ $SECONDS -gt 480 ] && { echo "out of time before $p"; break; }
  cp $S/$p/best.cu $P/$p--set.cu
  srcs=(); for f in $P/$p--*.cu; do srcs+=(--source $f); done
  timeout 60 build/kiln bench candidate --reuse-builds --problem $p --sizes kb "${srcs[@]}" --json-per-source \
    --build-dir /tmp/pbuild --build-cache /tmp/vcache -w 3 -n 10 --trials 2 --timeout 50 --timing guarded > $OUT/logs/$p-judge.txt 2>&1
  echo "$p judge exit $? at ${SECONDS}s"
  for f in $P/$p--*.cu; do j=${f%.cu}.json; [ -f $j ] && cp $j $OUT/verdicts/ && python3 scripts/verdict_rows.py $j "$(basename ${f%.cu})" --width 44; done
  python3 - "$P" "$p" "$S" <<'PY'
import glob, json, os, shutil, sys
sys.path.insert(0, "scripts"); import verdict_rows
P, p, S = sys.argv[1:]
def u(path):
    try: rows = [r for r in verdict_rows.rows(json.load(open(path))) if r.get("size") == "kb"]
    except (OSError, ValueError): return 0.0
    return rows[0]["utilization"] if rows and rows[0]["correct"] else 0.0
us = {f: u(f[:-3] + ".json") for f in glob.glob(f"{P}/{p}--*.cu")}
old = us.pop(f"{P}/{p}--set.cu", 0.0)
best = max(us, key=us.get) if us else None
if best and us[best] > 1.02 * old:
    shutil.copy(best, f"{S}/{p}/best.cu")
    print(f"{p}: {os.path.basename(best)} U {us[best]:.3f} replaces the set's U {old:.3f}")
else:
    print(f"{p}: the set's kernel stays (U {old:.3f}; best probe {us.get(best, 0):.3f})")
PY
done | tee $OUT/summary.txt
tar -cf - -C /tmp/vcache/units . | xz -T16 -3 > $OUT/units.tar.xz
tar -cJf $OUT/set-after.tar.xz evolve-set/versus-state/set
tar -czf $OUT/logs.tar.gz -C $OUT logs verdicts && rm -rf $OUT/logs $OUT/verdicts
