#!/usr/bin/env bash
# Prepared for the next session, NOT RUN (2026-12-02b's device time was spent). The checks of
# ee474e9's epilogue that calls 2 and 3 cut off, with the time they need:
# 1. OverlapGpu.FourRanks (the overlap runtime at 4 ranks sharing the GPU, ping-pong 128x144 and
#    128x176 plans among its 15) — ~90 s;
# 2. SignalingGemmGpu.EveryConfigurationMatchesCublas in one process (25 configurations x 24
#    cases, a line per configuration since the commit after b6de7ef) — ~330 s, capped at 400.
# Carry: kiln_gpu_tests alone (the working tree is ~51 MB; with kiln_gpu_tests and kiln together
# (13 MB compressed) the device refused the call as over 64 MiB).
# Prepared: ninja -C build -j2 kiln_gpu_tests; bash scripts/pack_carry.sh build/kiln_gpu_tests
# Device: run(command="bash docs/results/2026-12-02b-epilogue/scripts/next-call-a.sh", carry=["carry"], timeout_s=590)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=next-call-a
steps="${STEPS:-four gemm}"; DEADLINE=${DEADLINE:-575}
source scripts/device_steps.sh
note "binary: $(cat carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
if step four; then
  KILN_TEST_RANKS_PER_GPU=4 capped 150 tests-overlap-four.txt build/kiln_gpu_tests --gtest_filter=OverlapGpu.FourRanks
  grep -E "^\[ +(OK|FAILED|PASSED) |rank [0-9]:" "$out/tests-overlap-four.txt" | head -10 | tee -a "$out/summary.txt"
fi
if step gemm; then
  capped 400 tests-gemm.txt build/kiln_gpu_tests --gtest_filter=SignalingGemmGpu.EveryConfigurationMatchesCublas
  grep -E "^\[ +(OK|FAILED|PASSED) |checking|cases|expected" "$out/tests-gemm.txt" | head -40 | tee -a "$out/summary.txt"
fi
pack
