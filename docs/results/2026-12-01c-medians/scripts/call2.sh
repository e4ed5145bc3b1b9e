#!/usr/bin/env bash
# Issue 17 and the contiguous-row layout, 2026-12-01c, call 2 (call 1 was
# ../../2026-12-01b-tile-192/scripts/next-call.sh: the three tables at HEAD).
# 1. contiguous: OverlapContiguousRowsGpu at 1, 2 and 4 ranks (four ranks sharing the GPU) and its
#    refusals. New: plans whose tile height is not a power of two (192x128 ping-pong, 144x128 and
#    160x128 ping-pong-swap, NCCL and copy engines), which the layout refused until this session.
# 2. ab: issue 17's bf16 table with a second search timed beside the default one in the same
#    rounds: a fourth run of the default search, and the A/B of a stage 3 without its 300 ms
#    warm-up of each candidate and with 16 rounds instead of 6 (sustained-warmup-ms=0,
#    sustained-rounds=16). Call 1 found stage 3 reading 3-13% above the table's time for the same
#    kernel, and its picks among candidates within 1% not carrying over to the table.
# Prepared on the CPU machine:
#   ninja -C build -j2 kiln_gpu_tests kiln_gemm_capi
#   bash scripts/pack_carry.sh build/kiln_gpu_tests build/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-12-01c-medians/scripts/call2.sh", carry=["carry"],
#             timeout_s=600)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-call2c/c; rm -rf "$out"; mkdir -p "$out"; archive=call2
steps="${STEPS:-contiguous ab}"; DEADLINE=${DEADLINE:-580}
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
if step contiguous; then
  KILN_TEST_RANKS_PER_GPU=4 gtest_each 200 tests-contiguous.txt 'OverlapContiguousRowsGpu.*'
  grep -E "^\[ +(OK|FAILED|PASSED|EXITED|SKIPPED) |rank [0-9]:|contiguous rs" "$out/tests-contiguous.txt" \
    | head -40 | tee -a "$out/summary.txt"
fi
if step ab; then
  capped 380 ab-sustained-rounds.txt python3 scripts/torch_gemm_same_process.py --dtype bf16 \
    --order shuffle --rounds 8 --second-search sustained-warmup-ms=0,sustained-rounds=16 --json "$out/ab-sustained-rounds.json"
  cut -c1-150 "$out/ab-sustained-rounds.txt" >> "$out/summary.txt"
fi
pack
