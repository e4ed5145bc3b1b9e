#!/usr/bin/env bash
# Call 3 of 2026-12-02b (issue 17), one H200, binaries at ee474e9 (the one-box-per-band epilogue
# and stage 3's schedule diversity). Call 2 (STEPS=tests of call2.sh) passed the overlap runtime
# at 1 and 2 ranks and its contiguous-rows form at 1, 2 and 4, but EveryConfigurationMatchesCublas
# (25 configurations x 24 cases) was still running at its 150 s cap with no output, so a hang
# could not be told from slowness. Here:
# 1. gemm: the test once per configuration (KILN_TEST_GEMM_CONFIG), those whose epilogue changed
#    first, each under its own limit, with its time: a hang names its configuration;
# 2. sanitizers: memcheck and racecheck through kiln_gpu_tests on the changed configurations
#    (ping-pong 128x144: 4 warps, one 16x144 box; coop-n 128x320: 8 warps, 16x160 boxes);
# 3. table: issue 17's table in bf16 at this commit (when build/libkiln_gemm_capi.so was carried),
#    the pick also timed from build-base/ (297c408) when that was carried too;
# 4. OverlapGpu.FourRanks, the one overlap test call 2 did not reach.
# Prepared here: ninja -C build -j2 kiln_gpu_tests kiln_gemm_capi at ee474e9;
#   bash scripts/pack_carry.sh build/kiln_gpu_tests build/libkiln_gemm_capi.so (the working tree,
#   51 MB of it tracked files, and the carry must stay under the device's 64 MiB together)
# Device: run(command="bash docs/results/2026-12-02b-epilogue/scripts/call3.sh", carry=["carry"], timeout_s=600)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=call3
steps="${STEPS:-gemm sanitizers table four}"; DEADLINE=${DEADLINE:-585}
source scripts/device_steps.sh
note "binary: $(cat carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
changed=("tile=128x144 cluster=2x1 kernel=pingpong" "tile=128x144 cluster=1x2 kernel=pingpong"
         "tile=128x160 cluster=2x1 kernel=pingpong" "tile=128x160 cluster=1x2 kernel=pingpong"
         "tile=128x176 cluster=2x1 kernel=pingpong" "tile=128x176 cluster=1x2 kernel=pingpong"
         "tile=128x320 cluster=2x1 kernel=coop-n")
others=("tile=128x256 cluster=2x1 kernel=coop" "tile=128x128 cluster=2x1 kernel=coop"
        "tile=256x128 cluster=2x1 kernel=coop" "tile=256x128 cluster=1x2 kernel=coop"
        "tile=128x256 cluster=1x2 kernel=coop" "tile=128x256 cluster=1x1 kernel=coop"
        "tile=256x128 cluster=1x1 kernel=coop" "tile=128x128 cluster=2x1 kernel=pingpong"
        "tile=128x128 cluster=1x2 kernel=pingpong" "tile=64x256 cluster=1x1 kernel=pingpong"
        "tile=256x192 cluster=2x1 kernel=coop" "tile=256x192 cluster=1x2 kernel=coop"
        "tile=128x192 cluster=1x2 kernel=pingpong" "tile=128x192 cluster=2x1 kernel=pingpong"
        "tile=192x128 cluster=2x1 kernel=pingpong" "tile=192x128 cluster=1x2 kernel=pingpong"
        "tile=144x128 cluster=1x2 kernel=pingpong-swap" "tile=160x128 cluster=1x2 kernel=pingpong-swap")
if step gemm; then
  for config in "${changed[@]}" "${others[@]}"; do
    log="gemm-$(echo "$config" | tr ' =' '_-').txt"
    KILN_TEST_GEMM_CONFIG="$config" capped 45 "$log" build/kiln_gpu_tests \
      --gtest_filter=SignalingGemmGpu.EveryConfigurationMatchesCublas
    grep -E "^\[ +(OK|FAILED) |checking|expected|differ|error" "$out/$log" | head -5 | tee -a "$out/summary.txt"
    [ $((deadline - SECONDS)) -lt 420 ] && { note "gemm: stopping, the rest of the call needs the time"; break; }
  done
fi
if step sanitizers; then
  KILN_TEST_GEMM_CONFIG="tile=128x144 cluster=2x1 kernel=pingpong" capped 70 memcheck-128x144.txt \
    compute-sanitizer --tool memcheck --report-api-errors no build/kiln_gpu_tests \
    --gtest_filter=SignalingGemmGpu.EveryConfigurationMatchesCublas
  grep -E "ERROR SUMMARY|^\[ +(OK|FAILED) " "$out/memcheck-128x144.txt" | tee -a "$out/summary.txt"
  KILN_TEST_GEMM_CONFIG="tile=128x320 cluster=2x1 kernel=coop-n" capped 50 memcheck-128x320.txt \
    compute-sanitizer --tool memcheck --report-api-errors no build/kiln_gpu_tests \
    --gtest_filter=SignalingGemmGpu.EveryConfigurationMatchesCublas
  grep -E "ERROR SUMMARY|^\[ +(OK|FAILED) " "$out/memcheck-128x320.txt" | tee -a "$out/summary.txt"
  KILN_TEST_OVERLAP_PLAN="tile=128x144" capped 80 racecheck-overlap-128x144.txt \
    compute-sanitizer --tool racecheck --report-api-errors no --print-limit 1000 \
    build/kiln_gpu_tests --gtest_filter=OverlapGpu.OneRank
  grep -E "RACECHECK SUMMARY|^\[ +(OK|FAILED) |checking" "$out/racecheck-overlap-128x144.txt" | tee -a "$out/summary.txt"
fi
if step table && [ -f build/libkiln_gemm_capi.so ]; then
  extra=(); [ -f build-base/libkiln_gemm_capi.so ] && extra=(--extra-lib build-base/libkiln_gemm_capi.so)
  capped 200 table-bf16.txt python3 scripts/torch_gemm_same_process.py --dtype bf16 --rounds 32 \
    --race-top 1 "${extra[@]}" --json "$out/table-bf16.json"
  cut -c1-170 "$out/table-bf16.txt" >> "$out/summary.txt"
  python3 docs/results/2026-11-30j-wave-fit/scripts/summarize.py "$out"/table-*.json 2>&1 | tee -a "$out/summary.txt"
fi
if step four; then
  KILN_TEST_RANKS_PER_GPU=4 capped 90 tests-overlap-four.txt build/kiln_gpu_tests --gtest_filter=OverlapGpu.FourRanks
  grep -E "^\[ +(OK|FAILED|PASSED) |rank [0-9]:" "$out/tests-overlap-four.txt" | head -10 | tee -a "$out/summary.txt"
fi
pack
