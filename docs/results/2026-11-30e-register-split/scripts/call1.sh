#!/usr/bin/env bash
# Run as call 1 of 2026-11-30e (carry ["carry", "evolve-set"], commit 26fa7cc): unchanged from
# docs/results/2026-11-30d-sliced-copies/scripts/next-calls.sh, copied here as the record.
# The next session's first device call, planned at the end of 2026-11-30d (nothing here has run):
# the GPU tests of the loss and norm families on 1b9acd4's fixes (no NaN from leading -inf, the
# guarded Welford merge, fast-log's guard and fallback), then the set's loss and one-pass norm
# kernels regenerated beside their stored ones (probes-next.txt), through
# scripts/device_probe_genomes.sh's PROBE_VS_SET (382a8d8, its `run` step not yet on a GPU).
# Here first: ninja -C build -j2 kiln kiln_gpu_tests && bash scripts/pack_carry.sh build/kiln \
#   build/kiln_gpu_tests .deps/cutlass-4.2.0.0/include;
#   tar -xJf docs/results/2026-11-30d-sliced-copies/call6/set-after.tar.xz   (the state)
# Device, carry ["carry", "evolve-set"]:
#   bash docs/results/2026-11-30d-sliced-copies/scripts/next-calls.sh
# then unpack $OUT's set-after.tar.xz here if a probe replaced the set's kernel.
cd "$(dirname "$0")/../../../.." || exit 2
list=docs/results/2026-11-30d-sliced-copies/scripts/probes-next.txt
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
PROBE_JOBS=16 bash scripts/device_probe_genomes.sh prepare "$list" > /dev/null 2>&1
timeout 330 build/kiln_gpu_tests --gtest_filter='EvolveGpu.LossFamilyGeneratesCompilesAndIsJudged:EvolveGpu.NormFamilyGeneratesCompilesAndIsJudged:EvolveGpu.NormGridSplitRowAndStagingAreJudged' > "$OUT/gpu-tests.txt" 2>&1
echo "gpu tests exit $?"; grep -E "^\[  (PASSED|FAILED) " "$OUT/gpu-tests.txt"
PROBE_VS_SET=evolve-set/versus-state PROBE_TIMING=guarded bash scripts/device_probe_genomes.sh run "$list"
tar -cJf "$OUT/set-after.tar.xz" evolve-set/versus-state/set
