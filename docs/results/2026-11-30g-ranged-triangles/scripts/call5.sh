#!/usr/bin/env bash
# 2026-11-30g call 5: the GPU tests of this session's code. EvolveGpu.MatmulTriangleIsJudged now
# judges the ranged form too (B in registers, cooperative; A in registers with B split in
# shared memory, ping-pong; both triangles at the small size, the first at KernelBench's), and
# EvolveGpu.MatmulSm90SharedSplitIsJudged, cut at 240 s in call 1, gets the rest of the call.
# The tests' build cache starts with the units built here (TEST_TMPDIR).
# Here first: ninja -C build -j2 kiln kiln_gpu_tests; bash scripts/pack_carry.sh build/kiln
#   build/kiln_gpu_tests .deps/cutlass-4.2.0.0/include; tar -cJf evolve-set/unit-cache.tar.xz
#   evolve-set/unit-cache/units
# Device, carry ["carry", "evolve-set/unit-cache.tar.xz"]:
#   bash docs/results/2026-11-30g-ranged-triangles/scripts/call5.sh
cd "$(dirname "$0")/../../../.." || exit 2
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
head -1 carry/MANIFEST
tar -xJf evolve-set/unit-cache.tar.xz
export TEST_TMPDIR=/tmp/gt; mkdir -p $TEST_TMPDIR/kiln_evolve_gpu_build_cache
cp -r evolve-set/unit-cache/units $TEST_TMPDIR/kiln_evolve_gpu_build_cache/
for t in MatmulTriangleIsJudged:250 MatmulSm90SharedSplitIsJudged:$((560 - 250 - 20)); do
  name=${t%%:*}; limit=${t##*:}
  timeout $((limit > 60 ? limit : 60)) build/kiln_gpu_tests --gtest_filter="EvolveGpu.$name" > "$OUT/$name.txt" 2>&1
  echo "$name: exit $? at ${SECONDS}s"
  grep -E "^\[ +(OK|FAILED) \]|Failure|not accepted|rejected" "$OUT/$name.txt" | head -12
done
echo "done at ${SECONDS}s"
