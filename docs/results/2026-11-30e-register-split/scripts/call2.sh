#!/usr/bin/env bash
# 2026-11-30e call 2 (carry ["carry", "evolve-set/versus-state",
# "evolve-set/unit-cache.tar.xz"]): A split in registers (cutlass-sm90
# copies 1) and NDEBUG in the generated CUTLASS units, never run on a GPU before: the GPU tests
# of the register-split, sm90 and triangle matmuls at size small, then compute-sanitizer memcheck
# on three register-split kernels (A as stored; A staged and transposed with split-K in 2 x 1
# clusters; batched in 256 x 128 tiles). Sources from probes2.txt, prepared here with
# PROBE_BUILD_CACHE=evolve-set/unit-cache.
cd "$(dirname "$0")/../../../.." || exit 2
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
# The CUTLASS units built here, carried compressed (the carry is 64 MiB at most).
[ -d evolve-set/unit-cache ] || tar -xJf evolve-set/unit-cache.tar.xz
timeout 400 build/kiln_gpu_tests --gtest_filter='EvolveGpu.MatmulSm90RegisterSplitIsJudged:EvolveGpu.MatmulSm90GeneratesCompilesAndIsJudged:EvolveGpu.MatmulTriangleIsJudged' > "$OUT/gpu-tests.txt" 2>&1
echo "gpu tests exit $?"; grep -E "^\[  (PASSED|FAILED|  OK) |REJECT|rejected" "$OUT/gpu-tests.txt" | head -20
list=docs/results/2026-11-30e-register-split/scripts/probes2.txt
PROBE_JOBS=16 PROBE_BUILD_CACHE=evolve-set/unit-cache bash scripts/device_probe_genomes.sh prepare "$list" 2>&1 | tail -3
mkdir -p "$OUT/memcheck"
src=evolve-set/probe/src
for pair in kb1-1-square-matmul=$src/kb1-1-square-matmul--rs-128x128.cu \
            kb1-16-matmul-transposed-a=$src/kb1-16-matmul-transposed-a--rs-128x256.cu \
            kb1-3-batched-matmul=$src/kb1-3-batched-matmul--rs-256x128.cu; do
  [ $SECONDS -gt 540 ] && { echo "memcheck: out of time before $pair"; break; }
  p=${pair%%=*}; s=${pair#*=}; log=$OUT/memcheck/$p-$(basename ${s%.cu}).txt
  timeout 90 build/kiln bench candidate --problem $p --sizes small --source $s --reuse-builds \
    --build-dir /tmp/vsan --build-cache evolve-set/unit-cache -w 1 -n 2 --trials 1 --timeout 80 > $log.build 2>&1
  timeout 120 compute-sanitizer --tool memcheck --target-processes all --report-api-errors no \
    build/kiln bench candidate --problem $p --sizes small --source $s --reuse-builds \
    --build-dir /tmp/vsan --build-cache evolve-set/unit-cache -w 1 -n 2 --trials 1 --timeout 110 > $log 2>&1
  echo "memcheck $p $(basename $s): exit $? $(grep -h 'ERROR SUMMARY' $log | sort | uniq -c | tr '\n' ' ') $(grep -h '# candidate' $log | tail -1)"
done
tar -czf "$OUT/memcheck.tar.gz" -C "$OUT" memcheck && rm -rf "$OUT/memcheck"
