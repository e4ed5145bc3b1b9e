#!/usr/bin/env bash
# Call 1 of 2026-11-30j (issue 17), one H200: ping-pong 128x144 (the width that fits N = 8192 at
# M = 4096 into waves as evenly as cuBLAS's 128x168) and the search's balanced CTA cap (stage 3
# also times each candidate on the fewest SMs that keep its waves). Correctness first (every
# configuration against cuBLAS, the search tests, memcheck and racecheck on the new kernels), then
# issue 17's same-process table in bf16 with a second search without the balanced cap, in the
# same rounds (the cap's A/B), and again with a second search without the 144 width.
# Prepared on the CPU machine:
#   ninja -C build -j2 kiln kiln_gpu_tests kiln_gemm_capi
#   bash scripts/pack_carry.sh build/kiln build/kiln_gpu_tests build/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-11-30j-wave-fit/scripts/call1.sh",
#             carry=["carry"], timeout_s=600)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-call1/c; rm -rf "$out"; mkdir -p "$out"; archive=call1
steps="${STEPS:-tests sanitizers cap width}"; DEADLINE=575
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
new=(--config "tile=128x144 cluster=2x1 kernel=pingpong" --config "tile=128x144 cluster=1x2 kernel=pingpong")
if step tests; then
  capped 170 tests-configs.txt build/kiln_gpu_tests \
    --gtest_filter='SignalingGemmGpu.*:TunerGpu.HostLaunchGeometryMatchesTheKernel:LaunchGeometryGpu.*'
  grep -E "^\[ +(OK|FAILED|PASSED) |checked|capped|cap " "$out/tests-configs.txt" | tee -a "$out/summary.txt"
fi
if step sanitizers; then
  capped 60 sanitizer-memcheck.txt compute-sanitizer --tool memcheck --report-api-errors no \
    --kernel-name kns=device_kernel build/kiln overlap gemm --shape 1000x520x264 "${new[@]}" \
    -w 1 -n 2 --rounds 1 --caps 6
  grep -E "ERROR SUMMARY|correctness" "$out/sanitizer-memcheck.txt" | tee -a "$out/summary.txt"
  capped 60 sanitizer-racecheck.txt compute-sanitizer --tool racecheck --report-api-errors no \
    --print-limit 100000 build/kiln overlap gemm --shape 1000x520x264 "${new[@]}" \
    -w 1 -n 2 --rounds 1 --caps 6
  grep -E "RACECHECK SUMMARY|correctness" "$out/sanitizer-racecheck.txt" | tee -a "$out/summary.txt"
fi
if step cap; then
  capped 200 same-process-bf16-cap.txt python3 scripts/torch_gemm_same_process.py --dtype bf16 \
    --second-search balanced-cap=0 --json "$out/same-process-bf16-cap.json"
  cat "$out/same-process-bf16-cap.txt" >> "$out/summary.txt"
fi
if step width; then
  capped 200 same-process-bf16-width.txt python3 scripts/torch_gemm_same_process.py --dtype bf16 \
    --second-search without-tile-n=144 --json "$out/same-process-bf16-width.json"
  cat "$out/same-process-bf16-width.txt" >> "$out/summary.txt"
fi
pack
