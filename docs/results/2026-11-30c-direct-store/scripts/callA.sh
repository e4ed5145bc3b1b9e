#!/usr/bin/env bash
# 2026-11-30c call A: the code committed in 2026-11-30b and never run on a GPU (triangle splits
# and sums, one slice sum and one K-contiguous split for every shape, the review's fixes), and
# the new direct-store epilogue: EvolveGpu.MatmulSm90* + MatmulTriangle* at size small; memcheck
# on three regenerated set matmuls and two direct-store probes; meanwhile every CUTLASS unit the
# set and the probes need is compiled (returned as units.tar.xz for call B).
cd "$(dirname "$0")/../.." || exit 2
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
head -1 carry/MANIFEST
mkdir -p $OUT/logs
S=evolve-set/versus-state/set; C=/tmp/vcache; B=/tmp/vbuild; P=evolve-set/calls/srcA
mkdir -p $C/units $B
( python3 scripts/kb1_eager_vs_evolved.py --runs $S --problems 'kb1-*' --build-dir $B \
    --build-cache $C --prepare --jobs 10 > $OUT/logs/versus-prepare.txt 2>&1
  echo "prepare exit $? at ${SECONDS}s ($(grep -c ' compiled$' $OUT/logs/versus-prepare.txt) compiled)"
  ls $P/*.cu | while read -r f; do b=$(basename $f .cu); echo "${b%%--*} $f"; done |
    xargs -P 8 -L 1 sh -c 'build/kiln bench candidate --compile-only --reuse-builds --problem "$0" --source "$1" --build-dir /tmp/vbuild --build-cache /tmp/vcache > /dev/null 2>&1 || echo "probe compile failed: $1"'
  echo "probes compiled at ${SECONDS}s" ) > $OUT/logs/compile-status.txt 2>&1 &
compiler=$!
timeout 330 build/kiln_gpu_tests --gtest_filter='EvolveGpu.MatmulSm90*:EvolveGpu.MatmulTriangle*' \
  > $OUT/logs/gpu-tests.txt 2>&1
echo "gpu tests exit $? at ${SECONDS}s"
grep -E "^\[  (PASSED|FAILED|  OK) |Failure|not accepted|rejected" $OUT/logs/gpu-tests.txt | head -20
wait $compiler; cat $OUT/logs/compile-status.txt
# memcheck at size small, built from the cache (units compiled above)
for pair in kb1-14-upper-triangular-matmul=$S/kb1-14-upper-triangular-matmul/best.cu \
            kb1-8-matmul-irregular=$S/kb1-8-matmul-irregular/best.cu \
            kb1-3-batched-matmul=$S/kb1-3-batched-matmul/best.cu \
            kb1-7-matmul-small-k=$P/kb1-7-matmul-small-k--pp64x256-direct.cu \
            kb1-9-tall-skinny-matmul=$P/kb1-9-tall-skinny-matmul--direct-best.cu; do
  [ $SECONDS -gt 520 ] && { echo "memcheck: out of time before $pair"; break; }
  p=${pair%%=*}; src=${pair#*=}; log=$OUT/logs/memcheck-$p-$(basename ${src%.cu}).txt
  timeout 40 build/kiln bench candidate --problem $p --sizes small --source $src --reuse-builds \
    --build-dir /tmp/vsan --build-cache $C -w 1 -n 2 --trials 1 --timeout 30 > $log.build 2>&1
  timeout 90 compute-sanitizer --tool memcheck --target-processes all --report-api-errors no \
    build/kiln bench candidate --problem $p --sizes small --source $src --reuse-builds \
    --build-dir /tmp/vsan --build-cache $C -w 1 -n 2 --trials 1 --timeout 80 > $log 2>&1
  echo "memcheck $p $(basename $src): exit $? $(grep -h 'ERROR SUMMARY' $log | sort | uniq -c | tr '\n' ' ') $(grep -h '# candidate' $log | tail -1)"
done
tar -cf - -C $C/units . | xz -T16 -3 > $OUT/units.tar.xz; ls -la $OUT/units.tar.xz
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
