#!/usr/bin/env bash
# 2026-11-30e call 5 (carry ["carry", "evolve-set/versus-state", "evolve-set/unit-cache.tar.xz"];
# carry/ packed with build/kiln and CUTLASS's headers only, to stay under 64 MiB): B split in registers (register_operand 1) and A^T read M-major, never run
# on a GPU: probes5.txt judged at size small (correctness on other shapes), then at KernelBench's
# size beside the set's kernels (a probe more than 2% above replaces one); memcheck on a
# register-B kernel. The CUTLASS units were built here; the rest is compiled on the device.
cd "$(dirname "$0")/../../../.." || exit 2
list=docs/results/2026-11-30e-register-split/scripts/probes5.txt
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
grep -E "correct=" "$OUT/probe-small.txt" | awk '{print $1, $4}'
echo "kb from ${SECONDS}s"
PROBE_VS_SET=evolve-set/versus-state PROBE_BUILD_CACHE=evolve-set/unit-cache PROBE_LIMIT=60 \
  bash scripts/device_probe_genomes.sh run "$list" > /dev/null
grep -E "stays|replaces|correct=False" "$OUT/probe-summary.txt"
tar -cJf "$OUT/set-after.tar.xz" evolve-set/versus-state/set
s=evolve-set/probe/src/kb1-3-batched-matmul--rb.cu; log=$OUT/memcheck-kb1-3-rb.txt
if [ $SECONDS -lt 190 ]; then
  timeout 45 compute-sanitizer --tool memcheck --target-processes all --report-api-errors no \
    build/kiln bench candidate --problem kb1-3-batched-matmul --sizes small --source $s --reuse-builds \
    --build-dir evolve-set/probe/build --build-cache evolve-set/unit-cache -w 1 -n 2 --trials 1 --timeout 40 > $log 2>&1
  echo "memcheck kb1-3 rb: exit $? $(grep -h 'ERROR SUMMARY' $log | sort | uniq -c | tr '\n' ' ') $(grep -h '# candidate' $log | tail -1)"
else echo "memcheck skipped at ${SECONDS}s"; fi
