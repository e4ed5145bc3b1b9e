#!/usr/bin/env bash
# Issue 17, 2026-12-01b, call 2 (call 1 was ../2026-12-01-search-race/scripts/next-call-1.sh; its
# OverlapGpu.FourRanks ran out of its 240 s with every plan at four ranks on one GPU).
# 1. OverlapGpu.FourRanks with only the 192x128 plan (KILN_TEST_OVERLAP_PLAN): ReduceScatter hands
#    each rank 48 of the tile's 192 rows, the case the division form of the slot layout is for;
# 2. issue 17's table in bf16: the default search (without 192x128 while
#    overlap::awaits_gpu_check names it), its best 3 and 192x128 2x1 ping-pong raced as given plans;
# 3. the table in fp16 with the search including 192x128 (search:unchecked=1).
# Prepared on the CPU machine:
#   ninja -C build -j2 kiln_gpu_tests kiln_gemm_capi
#   bash scripts/pack_carry.sh build/kiln_gpu_tests build/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-12-01b-tile-192/scripts/call2.sh", carry=["carry"],
#             timeout_s=600)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-call2/c; rm -rf "$out"; mkdir -p "$out"; archive=call2
steps="${STEPS:-fourranks tables}"; DEADLINE=${DEADLINE:-580}
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
if step fourranks; then
  KILN_TEST_RANKS_PER_GPU=4 KILN_TEST_OVERLAP_PLAN=tile=192x128 gtest_each 90 tests-fourranks-192.txt \
    'OverlapGpu.FourRanks'
  grep -E "^\[ +(OK|FAILED|PASSED|EXITED|SKIPPED) |checking|rank [0-9]:" "$out/tests-fourranks-192.txt" \
    | head -20 | tee -a "$out/summary.txt"
fi
if step tables; then
  capped 300 race-bf16.txt python3 scripts/torch_gemm_same_process.py --dtype bf16 \
    --order shuffle --rounds 8 --race-top 3 \
    --extra-plan "tile=192x128 cluster=2x1 kernel=pingpong raster=n swizzle=1" \
    --json "$out/race-bf16.json"
  cut -c1-150 "$out/race-bf16.txt" >> "$out/summary.txt"
  capped 180 same-process-fp16.txt python3 scripts/torch_gemm_same_process.py --dtype fp16 \
    --order shuffle --rounds 10 --plan search:unchecked=1 --json "$out/same-process-fp16.json"
  cut -c1-150 "$out/same-process-fp16.txt" >> "$out/summary.txt"
  python3 docs/results/2026-11-30j-wave-fit/scripts/summarize.py "$out"/*.json 2>&1 | tee -a "$out/summary.txt"
fi
pack
