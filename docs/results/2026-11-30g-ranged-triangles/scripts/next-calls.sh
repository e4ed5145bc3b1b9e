#!/usr/bin/env bash
# The next session's first device call, planned at the end of 2026-11-30g (nothing here has run):
# EvolveGpu.MatmulTriangleIsJudged once more (1cf7bd0 made its second ranged genome cooperative),
# then the engine itself on kb1-14 at KernelBench's size: 240345e puts exploit-structure's ranged
# form in the first population, so a short search (16 evaluations, population 8) should reach
# the ranged kernel (U ~0.59 on an H200) without a hand-made probe.
# Here first: ninja -C build -j2 kiln kiln_gpu_tests; bash scripts/pack_carry.sh build/kiln
#   build/kiln_gpu_tests .deps/cutlass-4.2.0.0/include; tar -cJf evolve-set/unit-cache.tar.xz
#   evolve-set/unit-cache/units (the units built here; a cold checkout has none: the call then
#   compiles them, about a minute each, 16 at a time).
# Device, carry ["carry", "evolve-set/unit-cache.tar.xz"]:
#   bash docs/results/2026-11-30g-ranged-triangles/scripts/next-calls.sh
cd "$(dirname "$0")/../../../.." || exit 2
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
head -1 carry/MANIFEST
mkdir -p evolve-set/unit-cache
[ -f evolve-set/unit-cache.tar.xz ] && tar -xJf evolve-set/unit-cache.tar.xz
export TEST_TMPDIR=/tmp/gt; mkdir -p $TEST_TMPDIR/kiln_evolve_gpu_build_cache
cp -r evolve-set/unit-cache/units $TEST_TMPDIR/kiln_evolve_gpu_build_cache/ 2> /dev/null
timeout 240 build/kiln_gpu_tests --gtest_filter='EvolveGpu.MatmulTriangleIsJudged' > "$OUT/triangle-test.txt" 2>&1
echo "MatmulTriangleIsJudged: exit $? at ${SECONDS}s"
grep -E "^\[ +(OK|FAILED) \]|Failure" "$OUT/triangle-test.txt" | head -8
timeout $((560 - SECONDS)) build/kiln evolve run --problem kb1-14-upper-triangular-matmul --size kb \
  --budget 16 --population 8 --seed 1 --out "$OUT/evolve-kb1-14" --pool "$OUT/pool.json" \
  --build-cache evolve-set/unit-cache > "$OUT/evolve-kb1-14.txt" 2>&1
echo "evolve run: exit $? at ${SECONDS}s"
tail -5 "$OUT/evolve-kb1-14.txt"
