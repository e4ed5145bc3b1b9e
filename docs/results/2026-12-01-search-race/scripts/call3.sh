#!/usr/bin/env bash
# Call 3 (issue 17): the search with diverse finalists (tune/gemm_config_search.hpp:
# diverse_finalists; stage 2 in 10-launch blocks; 4 finalists under sustained load).
# 1. GPU tests of the search;
# 2. issue 17's table, bf16, shuffled, with the search's 4 best raced as given plans and the
#    128x192 2x1 ping-pong plan (whether the new search still misses a faster configuration);
# 3. the table in fp16 and once more in bf16, without extras (per-shape medians over the runs).
# Prepared on the CPU machine:
#   ninja -C build -j2 kiln kiln_gpu_tests kiln_gemm_capi
#   bash scripts/pack_carry.sh build/kiln build/kiln_gpu_tests build/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-12-01-search-race/scripts/call3.sh", carry=["carry"])
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-call3/c; rm -rf "$out"; mkdir -p "$out"; archive=call3
steps="${STEPS:-tests race tables}"; DEADLINE=${DEADLINE:-565}
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
if step tests; then
  capped 100 search-tests.txt build/kiln_gpu_tests \
    --gtest_filter='SignalingGemmGpu.SearchRanksEveryCandidateAndRunsTheBest:SignalingGemmGpu.SearchTimesTheBalancedCapUnderSustainedLoad'
  grep -E "^\[ *(OK|FAILED|PASSED|SKIPPED) *\]|finalists|stage" "$out/search-tests.txt" | head -20 >> "$out/summary.txt"
fi
if step race; then
  capped 230 race-bf16.txt python3 scripts/torch_gemm_same_process.py --dtype bf16 \
    --order shuffle --rounds 8 --race-top 4 \
    --extra-plan "tile=128x192 cluster=2x1 kernel=pingpong raster=n swizzle=1" \
    --json "$out/race-bf16.json"
  cut -c1-150 "$out/race-bf16.txt" >> "$out/summary.txt"
fi
if step tables; then
  for dtype in fp16 bf16; do
    capped 130 "same-process-$dtype.txt" python3 scripts/torch_gemm_same_process.py \
      --dtype "$dtype" --order shuffle --json "$out/same-process-$dtype.json"
    cut -c1-150 "$out/same-process-$dtype.txt" >> "$out/summary.txt"
  done
fi
python3 docs/results/2026-11-30j-wave-fit/scripts/summarize.py "$out"/*.json 2>&1 | tee -a "$out/summary.txt"
pack
