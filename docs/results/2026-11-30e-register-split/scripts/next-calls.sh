#!/usr/bin/env bash
# The next session's first device call, planned at the end of 2026-11-30e (nothing here has run):
# the register-split GPU test with its register-B genomes (never run as a test: call 5 judged the
# same kinds of kernels through probes), the sm90 test, then the whole set against PyTorch eager
# (call 5's five register-B kernels are in the state; call 4's figure predates them).
# Here first: tar -xJf docs/results/2026-11-30e-register-split/call5/set-after.tar.xz (the state);
#   cp docs/results/2026-11-30e-register-split/call5/units.tar.xz evolve-set/versus-state/
#   (every CUTLASS unit the set's best.cu files name, checked: 16 of 16 kernels reuse theirs);
#   ninja -C build -j2 kiln kiln_gpu_tests && bash scripts/pack_carry.sh build/kiln \
#   build/kiln_gpu_tests .deps/cutlass-4.2.0.0/include.
# Device, carry ["carry", "evolve-set/versus-state"]:
#   bash docs/results/2026-11-30e-register-split/scripts/next-calls.sh
cd "$(dirname "$0")/../../../.." || exit 2
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
head -1 carry/MANIFEST
timeout 300 build/kiln_gpu_tests --gtest_filter='EvolveGpu.MatmulSm90RegisterSplitIsJudged:EvolveGpu.MatmulSm90GeneratesCompilesAndIsJudged' > "$OUT/gpu-tests.txt" 2>&1
echo "gpu tests exit $? at ${SECONDS}s"; grep -E "^\[  (PASSED|FAILED) |Failure|returned" "$OUT/gpu-tests.txt" | head -20
mkdir -p "$OUT/logs"
VERSUS_STATE=evolve-set/versus-state VERSUS_LIMIT=$((570 - SECONDS - 40)) bash scripts/device_set_versus.sh \
  > "$OUT/logs/versus-run.txt" 2>&1
cat "$OUT/versus.md"
python3 scripts/combine_eager_vs_evolved.py "$OUT/eager-vs-evolved.json" | tail -3
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$OUT/logs"
