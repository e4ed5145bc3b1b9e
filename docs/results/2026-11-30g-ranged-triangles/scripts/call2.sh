#!/usr/bin/env bash
# 2026-11-30g call 2: the ranged triangle (exploit-structure ranged = 1) on the GPU for the first
# time, and synccheck on the transform warp's unaligned barrier (1ca9810).
# Here first: ninja -C build -j2 kiln; bash scripts/pack_carry.sh build/kiln
#   .deps/cutlass-4.2.0.0/include; PROBE_BUILD_CACHE=evolve-set/unit-cache
#   PROBE_VS_SET=evolve-set/versus-state bash scripts/device_probe_genomes.sh prepare
#   docs/results/2026-11-30g-ranged-triangles/scripts/ranged-probes.txt (and tw-synccheck.txt);
#   tar -cJf evolve-set/probe.tar.xz evolve-set/probe/src evolve-set/probe/build/*.so*
# Device, carry ["carry", "evolve-set/versus-state", "evolve-set/probe.tar.xz"]:
#   bash docs/results/2026-11-30g-ranged-triangles/scripts/call2.sh
cd "$(dirname "$0")/../../../.." || exit 2
d=docs/results/2026-11-30g-ranged-triangles/scripts
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
head -1 carry/MANIFEST
tar -xJf evolve-set/probe.tar.xz
# 1. Correctness at the small size (n = 256: 2 x 2 tiles of 128, 4 x 4 of 64), every probe.
SIZE=small PROBE_LIMIT=90 bash scripts/device_probe_genomes.sh run $d/ranged-probes.txt > /dev/null
mv "$OUT/probe-summary.txt" "$OUT/small-summary.txt"; mv "$OUT/probe.tar.gz" "$OUT/small-probe.tar.gz"
grep -E "correct=|exit" "$OUT/small-summary.txt" | awk '{print $1, $4, $5, $6, $7}'
echo "small done at ${SECONDS}s"
# 2. compute-sanitizer: memcheck and synccheck on two ranged kernels (upper, B in registers,
#    cooperative; lower, ping-pong with the consumers' split), synccheck on the transform warp.
san() {  # problem source tool
  timeout 60 compute-sanitizer --tool "$3" --target-processes all --report-api-errors no \
    build/kiln bench candidate --problem "$1" --sizes small --source "$2" --reuse-builds \
    --build-dir evolve-set/probe/build -w 1 -n 2 --trials 1 --timeout 50 > "$OUT/$3-$(basename "$2" .cu).txt" 2>&1
  echo "$3 $(basename "$2" .cu): exit $? $(grep -h 'ERROR SUMMARY' "$OUT/$3-$(basename "$2" .cu).txt" | sort | uniq -c | tr '\n' ' ')"
}
for tool in memcheck synccheck; do
  san kb1-14-upper-triangular-matmul evolve-set/probe/src/kb1-14-upper-triangular-matmul--ranged-r1-s0-co.cu $tool
  san kb1-15-lower-triangular-matmul evolve-set/probe/src/kb1-15-lower-triangular-matmul--ranged-r1-s1-pp.cu $tool
done
san kb1-17-matmul-transposed-b evolve-set/probe/src/kb1-17-matmul-transposed-b--tw-r0.cu synccheck
echo "sanitizers done at ${SECONDS}s"
# 3. KernelBench's size beside the set's kernels (a probe 2% above replaces best.cu).
PROBE_VS_SET=evolve-set/versus-state PROBE_LIMIT=120 bash scripts/device_probe_genomes.sh run $d/ranged-probes.txt > /dev/null
grep -E "correct=|stays|replaces|exit" "$OUT/probe-summary.txt" | awk '{print $1, $4, $5, $6, $7, $8, $9, $10}'
tar -cJf "$OUT/set-after.tar.xz" evolve-set/versus-state/set
echo "done at ${SECONDS}s"
