#!/usr/bin/env bash
# Issue 17, 2026-12-01b, call 3: the ping-pong-swap kernels (CUTLASS's ping-pong kernel on Cᵀ,
# tiles 144x128 and 160x128 with 1x2 clusters; built on the CPU machine in this session, 0 spills
# and 0 R2UR-moved descriptors by scripts/probe_gemm_registers.sh) checked, then timed.
# 1. tests: both against cuBLAS (24 cases each, both dtypes and layouts), host launch geometry
#    against the kernel's (every built configuration, 5000x8192x8192 among the shapes), the overlap
#    runtime with the two swapped plans at 1, 2 and 4 ranks sharing the GPU;
# 2. memcheck and racecheck on both kernels;
# 3. issue 17's table in bf16 with the search including them (search:unchecked=1) and
#    144x128 ping-pong-swap raced as a given plan.
# Prepared on the CPU machine:
#   ninja -C build -j2 kiln kiln_gpu_tests kiln_gemm_capi
#   bash scripts/pack_carry.sh build/kiln build/kiln_gpu_tests build/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-12-01b-tile-192/scripts/call3.sh", carry=["carry"],
#             timeout_s=600)
# Run on 2026-12-01 in two calls, the three binaries being over the carry limit together:
#   call 3: STEPS="tests sanitizers" (carry kiln, kiln_gpu_tests; binary 42448f1). Its sanitizer
#           runs stopped at `kiln overlap gemm`'s CUTLASS-twin column, which has no swapped twin
#           (fixed: overlap::has_plain_cutlass_twin);
#   call 4: STEPS="sanitizers tables" (carry kiln, libkiln_gemm_capi.so; the fixed binary).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-call3/c; rm -rf "$out"; mkdir -p "$out"; archive=call3
steps="${STEPS:-tests sanitizers tables}"; DEADLINE=${DEADLINE:-570}
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
swap=(--config "tile=144x128 cluster=1x2 kernel=pingpong-swap" --config "tile=160x128 cluster=1x2 kernel=pingpong-swap")
if step tests; then
  KILN_TEST_GEMM_CONFIG=pingpong-swap capped 60 tests-swap.txt build/kiln_gpu_tests \
    --gtest_filter='SignalingGemmGpu.EveryConfigurationMatchesCublas:TunerGpu.HostLaunchGeometryMatchesTheKernel'
  grep -E "^\[ +(OK|FAILED|PASSED) |checking|geometry|error" "$out/tests-swap.txt" | head -30 | tee -a "$out/summary.txt"
  KILN_TEST_RANKS_PER_GPU=4 KILN_TEST_OVERLAP_PLAN=pingpong-swap gtest_each 100 tests-overlap-swap.txt \
    'OverlapGpu.OneRank:OverlapGpu.TwoRanks:OverlapGpu.FourRanks'
  grep -E "^\[ +(OK|FAILED|PASSED|EXITED|SKIPPED) |rank [0-9]:" "$out/tests-overlap-swap.txt" | head -30 | tee -a "$out/summary.txt"
fi
if step sanitizers; then
  capped 60 sanitizer-memcheck.txt compute-sanitizer --tool memcheck --report-api-errors no \
    --kernel-name kns=device_kernel build/kiln overlap gemm --shape 1000x520x264 "${swap[@]}" \
    -w 1 -n 2 --rounds 1 --caps 6
  grep -E "ERROR SUMMARY|correctness" "$out/sanitizer-memcheck.txt" | tee -a "$out/summary.txt"
  capped 130 sanitizer-racecheck.txt compute-sanitizer --tool racecheck --report-api-errors no \
    --print-limit 100000 build/kiln overlap gemm --shape 600x520x264 "${swap[@]}" \
    -w 1 -n 2 --rounds 1 --caps 6
  grep -E "RACECHECK SUMMARY|correctness" "$out/sanitizer-racecheck.txt" | tee -a "$out/summary.txt"
fi
if step tables; then
  capped 260 race-bf16.txt python3 scripts/torch_gemm_same_process.py --dtype bf16 \
    --order shuffle --rounds 8 --plan search:unchecked=1 --race-top 2 \
    --extra-plan "tile=144x128 cluster=1x2 kernel=pingpong-swap raster=n swizzle=1" \
    --json "$out/race-bf16.json"
  cut -c1-150 "$out/race-bf16.txt" >> "$out/summary.txt"
  python3 docs/results/2026-11-30j-wave-fit/scripts/summarize.py "$out"/*.json 2>&1 | tee -a "$out/summary.txt"
fi
pack
