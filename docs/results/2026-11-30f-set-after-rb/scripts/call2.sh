#!/usr/bin/env bash
# 2026-11-30f call 2 (carry ["carry", "evolve-set/versus-state", "evolve-set/unit-cache.tar.xz"];
# carry/ packed with build/kiln and CUTLASS's headers: kiln_gpu_tests did not fit the 64 MiB): shared_split (no
# operand split in memory), never run on a GPU. shared-split-probes.txt judged at size small
# (correctness on other shapes), then at KernelBench's size beside the set's kernels (a probe
# more than 2% above replaces one); memcheck on two shared-split kernels (cooperative with both
# operands read as stored; ping-pong); then the GPU test if time is left. The CUTLASS units were
# built here (unit-cache); the rest is compiled on the device.
cd "$(dirname "$0")/../../../.." || exit 2
list=docs/results/2026-11-30f-set-after-rb/scripts/shared-split-probes.txt
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
head -1 carry/MANIFEST
[ -d evolve-set/unit-cache ] || tar -xJf evolve-set/unit-cache.tar.xz
PROBE_JOBS=16 PROBE_BUILD_CACHE=evolve-set/unit-cache bash scripts/device_probe_genomes.sh prepare "$list" 2>&1 | tail -1
for p in $(grep -v '^#' "$list" | awk '{print $1}' | sort -u); do
  cp evolve-set/versus-state/set/$p/best.cu evolve-set/probe/src/$p--set.cu; echo "$p evolve-set/probe/src/$p--set.cu"
done | xargs -P 8 -L 1 sh -c 'build/kiln bench candidate --compile-only --reuse-builds --problem "$0" --source "$1" --build-dir evolve-set/probe/build --build-cache evolve-set/unit-cache > /dev/null 2>&1 || echo "not built: $1"'
echo "built at ${SECONDS}s"
SIZE=small PROBE_BUILD_CACHE=evolve-set/unit-cache PROBE_LIMIT=60 \
  bash scripts/device_probe_genomes.sh run "$list" > /dev/null
mv "$OUT/probe-summary.txt" "$OUT/probe-small.txt"; mv "$OUT/probe.tar.gz" "$OUT/probe-small.tar.gz"
grep -E "correct=" "$OUT/probe-small.txt" | awk '{print $1, $4, $5}'
echo "kb from ${SECONDS}s"
PROBE_VS_SET=evolve-set/versus-state PROBE_BUILD_CACHE=evolve-set/unit-cache PROBE_LIMIT=60 \
  bash scripts/device_probe_genomes.sh run "$list" > /dev/null
grep -E "correct=|stays|replaces" "$OUT/probe-summary.txt" | awk '{print $1, $4, $5, $6, $7, $8, $9, $10}'
tar -cJf "$OUT/set-after.tar.xz" evolve-set/versus-state/set
for s in kb1-17-matmul-transposed-b--ss-r0 kb1-11-4d-tensor-matmul--ss-pp-r1; do
  log=$OUT/memcheck-$s.txt
  if [ $SECONDS -lt 480 ]; then
    timeout 50 compute-sanitizer --tool memcheck --target-processes all --report-api-errors no \
      build/kiln bench candidate --problem ${s%--*} --sizes small --source evolve-set/probe/src/$s.cu --reuse-builds \
      --build-dir evolve-set/probe/build --build-cache evolve-set/unit-cache -w 1 -n 2 --trials 1 --timeout 45 > $log 2>&1
    echo "memcheck $s: exit $? $(grep -h 'ERROR SUMMARY' $log | sort | uniq -c | tr '\n' ' ') $(grep -h '# candidate' $log | tail -1)"
  else echo "memcheck $s skipped at ${SECONDS}s"; fi
done
left=$((575 - SECONDS))
if [ $left -gt 60 ]; then
  timeout $left build/kiln_gpu_tests --gtest_filter='EvolveGpu.MatmulSm90SharedSplitIsJudged' > "$OUT/gpu-test.txt" 2>&1
  echo "gpu test exit $? at ${SECONDS}s"; grep -E "^\[ +(OK|FAILED) \]|Failure|returned|rejected" "$OUT/gpu-test.txt" | head -20
else echo "gpu test skipped at ${SECONDS}s"; fi
