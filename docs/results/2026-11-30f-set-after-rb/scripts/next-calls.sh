#!/usr/bin/env bash
# The next session's first device call, planned at the end of 2026-11-30f (nothing here has run):
# shared_split 2 (the transform warp, 97677d0) has never run on a GPU. First its GPU test (13
# products; the transform-warp genomes of EvolveGpu.MatmulSm90SharedSplitIsJudged, compiled on
# the device), memcheck and synccheck on one transform-warp kernel, then the
# probes of transform-warp-probes.txt at KernelBench's size beside the set (the GPU test judges
# the small size). If it runs out of time, the probes go to a second call.
# Here first: tar -xJf docs/results/2026-11-30f-set-after-rb/call3/set-after.tar.xz (the state);
#   ninja -C build -j2 kiln kiln_gpu_tests && bash scripts/pack_carry.sh build/kiln \
#   build/kiln_gpu_tests .deps/cutlass-4.2.0.0/include
#   (the CUTLASS units are compiled on the device: carry/ with kiln_gpu_tests, the state and a
#   unit cache do not fit 64 MiB together).
# Device, carry ["carry", "evolve-set/versus-state"] (+ "evolve-set/tw-cache.tar.xz" if present):
#   bash docs/results/2026-11-30f-set-after-rb/scripts/next-calls.sh
cd "$(dirname "$0")/../../../.." || exit 2
list=docs/results/2026-11-30f-set-after-rb/scripts/transform-warp-probes.txt
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
head -1 carry/MANIFEST
timeout 240 build/kiln_gpu_tests --gtest_filter='EvolveGpu.MatmulSm90SharedSplitIsJudged' > "$OUT/gpu-test.txt" 2>&1
echo "gpu test exit $? at ${SECONDS}s"; grep -E "^\[ +(OK|FAILED) \]|Failure|returned|timed out" "$OUT/gpu-test.txt" | head -20
mkdir -p evolve-set/unit-cache
# A warm checkout may hold the six transform-warp units built here at the end of 2026-11-30f
# (evolve-set/tw-cache.tar.xz, 1 MB, git-ignored): carry it too and they are not rebuilt.
[ -f evolve-set/tw-cache.tar.xz ] && tar -xJf evolve-set/tw-cache.tar.xz -C evolve-set &&
  cp -r evolve-set/tw-cache/. evolve-set/unit-cache/
PROBE_JOBS=16 PROBE_VS_SET=evolve-set/versus-state PROBE_BUILD_CACHE=evolve-set/unit-cache \
  bash scripts/device_probe_genomes.sh prepare "$list" 2>&1 | tail -1
echo "built at ${SECONDS}s"
s=evolve-set/probe/src/kb1-17-matmul-transposed-b--tw-r0.cu
for tool in memcheck synccheck; do
  timeout 50 compute-sanitizer --tool $tool --target-processes all --report-api-errors no \
    build/kiln bench candidate --problem kb1-17-matmul-transposed-b --sizes small --source $s --reuse-builds \
    --build-dir evolve-set/probe/build --build-cache evolve-set/unit-cache -w 1 -n 2 --trials 1 --timeout 45 > "$OUT/$tool-tw.txt" 2>&1
  echo "$tool kb1-17 tw-r0: exit $? $(grep -h 'ERROR SUMMARY' "$OUT/$tool-tw.txt" | sort | uniq -c | tr '\n' ' ')"
done
echo "kb from ${SECONDS}s (the GPU test judged the small size)"
PROBE_VS_SET=evolve-set/versus-state PROBE_BUILD_CACHE=evolve-set/unit-cache PROBE_LIMIT=60 \
  bash scripts/device_probe_genomes.sh run "$list" > /dev/null
grep -E "correct=|stays|replaces" "$OUT/probe-summary.txt" | awk '{print $1, $4, $5, $6, $7, $8, $9, $10}'
tar -cJf "$OUT/set-after.tar.xz" evolve-set/versus-state/set
echo "done at ${SECONDS}s"
