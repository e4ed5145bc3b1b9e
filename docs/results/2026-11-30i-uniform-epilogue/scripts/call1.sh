#!/usr/bin/env bash
# Call 1 of 2026-11-30i (issue 17), one H200: the epilogue that leaves the ping-pong k-loop's GMMA
# descriptors in uniform registers (55f76a4). Correctness first (every configuration against
# cuBLAS, memcheck and racecheck on every configuration), then kiln's GEMM against its CUTLASS twin
# (same main loop, CUTLASS's own epilogue) and cuBLAS, interleaved, on 2026-11-30h call 5's
# configurations and shapes (there kiln was 2.7-2.9% slower than the twin), then the overlap
# runtime's one- and two-rank tests.
# Prepared on the CPU machine:
#   ninja -C build -j2 kiln kiln_gpu_tests kiln_gemm_capi
#   bash scripts/pack_carry.sh build/kiln build/kiln_gpu_tests build/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-11-30i-uniform-epilogue/scripts/call1.sh",
#             carry=["carry"], timeout_s=600)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-call1/c; rm -rf "$out"; mkdir -p "$out"; archive=call1
steps="tests memcheck twin racecheck overlap"; DEADLINE=570
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
configs=(); while IFS= read -r c; do configs+=(--config "$c"); done < <(build/kiln overlap gemm --help |
  sed -n 's/^ *"\(tile=.*\)"$/\1/p')
if step tests; then
  capped 130 tests-configs.txt build/kiln_gpu_tests \
    --gtest_filter='SignalingGemmGpu.*:TunerGpu.HostLaunchGeometryMatchesTheKernel'
  grep -E "^\[ +(OK|FAILED|PASSED) " "$out/tests-configs.txt" | tee -a "$out/summary.txt"
fi
if step memcheck; then
  note "configurations: $(( ${#configs[@]} / 2 ))"
  capped 120 sanitizer-memcheck.txt compute-sanitizer --tool memcheck --report-api-errors no \
    --kernel-name kns=device_kernel build/kiln overlap gemm --shape 1000x520x264 "${configs[@]}" \
    -w 1 -n 2 --rounds 1 --caps 6
  grep -E "ERROR SUMMARY|correctness" "$out/sanitizer-memcheck.txt" | tee -a "$out/summary.txt"
fi
if step twin; then
  for c in "tile=128x176 cluster=2x1 kernel=pingpong" "tile=128x160 cluster=1x2 kernel=pingpong" \
           "tile=128x192 cluster=2x1 kernel=pingpong"; do
    name=$(echo "$c" | sed 's/tile=//; s/ cluster=/-/; s/ kernel=/-/')
    capped 100 "overlap-gemm-$name.txt" build/kiln overlap gemm --shape 16384x16384x2048 \
      --shape 4096x8192x2048 --shape 8192x8192x8192 --config "$c" --caps 132 --rounds 6 -n 20 \
      --json "$out/overlap-gemm-$name.json"
    cut -c1-150 "$out/overlap-gemm-$name.txt" | tee -a "$out/summary.txt"
  done
fi
if step racecheck; then
  capped 150 sanitizer-racecheck.txt compute-sanitizer --tool racecheck --report-api-errors no \
    --print-limit 100000 build/kiln overlap gemm --shape 1000x520x264 "${configs[@]}" \
    -w 1 -n 2 --rounds 1 --caps 6
  grep -E "RACECHECK SUMMARY|correctness" "$out/sanitizer-racecheck.txt" | tee -a "$out/summary.txt"
  note "racecheck lines naming kiln/CUTLASS kernels: $(grep -c 'device_kernel' "$out/sanitizer-racecheck.txt")"
fi
if step overlap; then
  KILN_TEST_RANKS_PER_GPU=4 capped 130 tests-overlap.txt build/kiln_gpu_tests \
    --gtest_filter='OverlapGpu.OneRank:OverlapGpu.TwoRanks'
  grep -E "^\[ +(OK|FAILED|PASSED) |SKIPPED" "$out/tests-overlap.txt" | tee -a "$out/summary.txt"
fi
pack
