#!/usr/bin/env bash
# 2026-11-30b call 6: the vectorized operand splits and slice sum of the sm90 3xTF32 matmuls:
# old (the set's best.cu) against new (the same genome from the new generator) judged side by
# side (guarded, kb) on the 12 sm90 problems; ncu by kernel on three new ones; the GPU test of
# every sm90 problem at size small; memcheck on the three vector kernels; eager against the
# set with the new sources, on the matmul problems.
cd "$(dirname "$0")/../.." || exit 2
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
head -1 carry/MANIFEST
mkdir -p $OUT/logs $OUT/verdicts /tmp/c6cache/units
cp -p prebuilt-units/units/*.o /tmp/c6cache/units/ 2>/dev/null; tar -xJf evolve-set/versus-state/units.tar.xz -C /tmp/c6cache/units
D=evolve-set/calls/src6
ls $D/*.cu | while read -r f; do b=$(basename $f .cu); echo "${b%%--*} $f"; done |
  xargs -P 16 -L 1 sh -c 'build/kiln bench candidate --compile-only --reuse-builds --problem "$0" --source "$1" --build-dir /tmp/c6 --build-cache /tmp/c6cache > /dev/null 2>&1 || echo "compile failed: $1"'
echo "compiled at ${SECONDS}s"
for p in $(ls $D | sed 's/--.*//' | sort -u); do
  timeout 90 build/kiln bench candidate --reuse-builds --problem $p --sizes kb --source $D/$p--old.cu --source $D/$p--new.cu --json-per-source \
    --build-dir /tmp/c6 --build-cache /tmp/c6cache -w 3 -n 10 --trials 2 --timeout 60 --timing guarded > $OUT/logs/$p-judge.txt 2>&1
  echo "$p judge exit $? at ${SECONDS}s"
  for f in $D/$p--old.cu $D/$p--new.cu; do j=${f%.cu}.json; [ -f $j ] && cp $j $OUT/verdicts/ && python3 scripts/verdict_rows.py $j "$(basename ${f%.cu})" --width 44; done
done | tee $OUT/summary.txt
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
NCU_BUILD_CACHE=/tmp/c6cache NCU_KERNELS='split|sum_slices|device_kernel' NCU_COUNT=4 NCU_METRICS=$M NCU_SIZE=kb NCU_REPLAY=application NCU_LIMIT=60 timeout 150 \
  bash scripts/device_ncu_candidates.sh kb1-1-square-matmul=$D/kb1-1-square-matmul--new.cu kb1-2-matmul=$D/kb1-2-matmul--new.cu kb1-3-batched-matmul=$D/kb1-3-batched-matmul--new.cu > $OUT/logs/ncu-run.txt 2>&1
echo "ncu exit $? at ${SECONDS}s"
mkdir -p /tmp/ncux && tar -xzf $OUT/ncu.tar.gz -C /tmp/ncux 2>/dev/null && rm -f $OUT/ncu.tar.gz $OUT/ncu-summary.txt
python3 evolve-set/calls/by_kernel.py /tmp/ncux/ncu/*.csv | tee $OUT/by-kernel.txt
r=$((420-SECONDS)); [ $r -gt 60 ] && timeout $r build/kiln_gpu_tests --gtest_filter='EvolveGpu.MatmulSm90*' > $OUT/logs/gpu-test.txt 2>&1
echo "gpu test exit $? at ${SECONDS}s"; grep -E "^\[  (PASSED|FAILED|  OK) |Failure|rejected|not accepted" $OUT/logs/gpu-test.txt | head -10
r=$((490-SECONDS)); [ $r -gt 40 ] && SAN_LIMIT=60 SAN_PROBLEMS= SAN_TOOLS=memcheck SAN_SOURCES="kb1-2-matmul=$D/kb1-2-matmul--new.cu kb1-16-matmul-transposed-a=$D/kb1-16-matmul-transposed-a--new.cu" \
  timeout $r bash scripts/device_evolve_quality.sh sanitizer > $OUT/logs/sanitizer.txt 2>&1
echo "sanitizer at ${SECONDS}s"; grep -E "ERROR SUMMARY|accepted|rejected" $OUT/logs/sanitizer.txt | head -4; rm -f $OUT/summary-quality.txt; mv $OUT/sanitizer.tar.gz $OUT/logs/ 2>/dev/null
# The set's state with the new sources, eager in the same call, the matmul problems.
for f in $D/*--new.cu; do b=$(basename $f .cu); cp $f evolve-set/versus-state/set/${b%%--*}/best.cu; done
r=$((585-SECONDS)); [ $r -gt 60 ] && VERSUS_STATE=evolve-set/versus-state VERSUS_PROBLEMS="$(ls $D | sed 's/--.*//' | sort -u | tr '\n' ' ')" VERSUS_LIMIT=$((r-30)) timeout $r bash scripts/device_set_versus.sh > $OUT/logs/versus-run.txt 2>&1
echo "versus at ${SECONDS}s"; cat $OUT/versus.md 2>/dev/null
tar -czf $OUT/logs.tar.gz -C $OUT logs verdicts && rm -rf $OUT/logs $OUT/verdicts
