#!/usr/bin/env bash
# Prepared for the next session (issue 17); NOT RUN in 2026-12-01 (its device time was spent).
# The ping-pong 192x128 kernels (2x1, 1x2; built 2026-12-01, 0 spills by
# scripts/probe_gemm_registers.sh) and the slot layout's tile heights that are not powers of two,
# checked on a GPU before anything relies on them, then issue 17's table with them in the search:
# 1. tests: the 192x128 configurations against cuBLAS (KILN_TEST_GEMM_CONFIG), the host launch
#    geometry, the overlap runtime with a 192x128 plan at 1, 2 and 4 ranks (ReduceScatter splits
#    each tile into 96 or 48 rows per rank; 4 ranks share the GPU);
# 2. memcheck and racecheck on both 192x128 kernels;
# 3. only if step 1 passed: issue 17's table, bf16, the default search (which leaves 192x128 out
#    until overlap::awaits_gpu_check says otherwise) with 192x128 raced as a given plan on every
#    shape, then fp16 with the search including it (search:unchecked=1).
# After it passes: empty overlap::awaits_gpu_check (src/overlap/gemm_shape.cpp).
# Prepared on the CPU machine:
#   ninja -C build -j2 kiln kiln_gpu_tests kiln_gemm_capi
#   bash scripts/pack_carry.sh build/kiln build/kiln_gpu_tests build/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-12-01-search-race/scripts/next-call.sh",
#             carry=["carry"], timeout_s=600)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/c; rm -rf "$out"; mkdir -p "$out"; archive=next
steps="${STEPS:-tests sanitizers tables}"; DEADLINE=${DEADLINE:-575}
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
new=(--config "tile=192x128 cluster=2x1 kernel=pingpong" --config "tile=192x128 cluster=1x2 kernel=pingpong")
if step tests; then
  KILN_TEST_GEMM_CONFIG=tile=192x128 capped 60 tests-192.txt build/kiln_gpu_tests \
    --gtest_filter='SignalingGemmGpu.EveryConfigurationMatchesCublas:TunerGpu.HostLaunchGeometryMatchesTheKernel:LaunchGeometryGpu.*'
  grep -E "^\[ +(OK|FAILED|PASSED) |checking|checked|error" "$out/tests-192.txt" | head -20 | tee -a "$out/summary.txt"
  KILN_TEST_RANKS_PER_GPU=4 gtest_each 150 tests-overlap.txt 'OverlapGpu.OneRank:OverlapGpu.TwoRanks:OverlapGpu.FourRanks'
  grep -E "^\[ +(OK|FAILED|PASSED|EXITED|SKIPPED) |192x128" "$out/tests-overlap.txt" | head -20 | tee -a "$out/summary.txt"
fi
if step sanitizers; then
  capped 60 sanitizer-memcheck.txt compute-sanitizer --tool memcheck --report-api-errors no \
    --kernel-name kns=device_kernel build/kiln overlap gemm --shape 1000x520x264 "${new[@]}" \
    -w 1 -n 2 --rounds 1 --caps 6
  grep -E "ERROR SUMMARY|correctness" "$out/sanitizer-memcheck.txt" | tee -a "$out/summary.txt"
  capped 120 sanitizer-racecheck.txt compute-sanitizer --tool racecheck --report-api-errors no \
    --print-limit 100000 build/kiln overlap gemm --shape 1000x520x264 "${new[@]}" \
    -w 1 -n 2 --rounds 1 --caps 6
  grep -E "RACECHECK SUMMARY|correctness" "$out/sanitizer-racecheck.txt" | tee -a "$out/summary.txt"
fi
if step tables; then
  if ! grep -q "^\[  PASSED  \]" "$out/tests-192.txt" 2>/dev/null ||
     grep -q "^\[  FAILED  \]" "$out/tests-192.txt"; then
    note "tables: skipped, the 192x128 tests did not all pass (tests-192.txt)"
  else
    capped 200 race-bf16.txt python3 scripts/torch_gemm_same_process.py --dtype bf16 \
      --order shuffle --rounds 8 --race-top 3 \
      --extra-plan "tile=192x128 cluster=2x1 kernel=pingpong raster=n swizzle=1" \
      --json "$out/race-bf16.json"
    cut -c1-150 "$out/race-bf16.txt" >> "$out/summary.txt"
    capped 130 same-process-fp16.txt python3 scripts/torch_gemm_same_process.py --dtype fp16 \
      --order shuffle --rounds 12 --plan search:unchecked=1 --json "$out/same-process-fp16.json"
    cut -c1-150 "$out/same-process-fp16.txt" >> "$out/summary.txt"
    python3 docs/results/2026-11-30j-wave-fit/scripts/summarize.py "$out"/*.json 2>&1 | tee -a "$out/summary.txt"
  fi
fi
pack
