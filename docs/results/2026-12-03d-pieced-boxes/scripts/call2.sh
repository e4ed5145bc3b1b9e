#!/usr/bin/env bash
# Call 2 of 2026-12-03d (issue 17), one H200: the pieced store boxes' GPU tests
# (EveryConfigurationMatchesCublas on every pieced configuration, a 64-column and a swapped one,
# whose staging now also goes through store_staging_byte), then where CUTLASS's ping-pong main
# loop loses its ~450 cycles per tile, from the clock records of a diagnostic build
# (-DKILN_MAINLOOP_TRACE: mainloop-trace.patch, CUTLASS's mma/mma_tail with %clock64 reads) at
# 4096x8192x2048 (and M = 2048 / 8192, K = 8192, a 128x128 tile).
# Prepared: cmake -S . -B build-trace -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_FLAGS=-DKILN_MAINLOOP_TRACE;
#   cmake --build build-trace -j2 --target kiln_gemm_capi;
#   bash scripts/pack_carry.sh build/kiln_gpu_tests build-trace/libkiln_gemm_capi.so
# Device: run(command="STEPS=configs bash docs/results/2026-12-03d-pieced-boxes/scripts/call2.sh", carry=["carry"])
# (the trace step ran in call 3: with the GPU tests the carry exceeds what the tree leaves of 64 MiB)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=${ARCHIVE:-call2}
steps="${STEPS:-configs trace}"; DEADLINE=${DEADLINE:-500}
source scripts/device_steps.sh
traced=build-trace/libkiln_gemm_capi.so
note "binary: $(cat carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
p144="tile=128x144 cluster=2x1 kernel=pingpong raster=m swizzle=1"
if step configs; then
  for c in x144 x160 x176 x320 "tile=128x128 cluster=2x1 kernel=pingpong" "tile=144x128"; do
    KILN_TEST_GEMM_CONFIG="$c" gtest_each 45 "configs-${c// /_}.txt" 'SignalingGemmGpu.EveryConfigurationMatchesCublas'
    grep -E "checking|cases,|FAILED|OK \]|EXITED|slot|model" "$out/configs-${c// /_}.txt" | head -6 | tee -a "$out/summary.txt"
  done
fi
if step trace; then
  while IFS='|' read -r shape plan; do
    log="trace-$shape-$(echo "$plan" | cut -d' ' -f1 | tr = -)"
    capped 60 "$log.txt" python3 scripts/gemm_mainloop_trace.py collect --lib $traced --shape $shape \
      --plan "$plan" --json "$out/$log.json"
    cat "$out/$log.txt" | cut -c1-400 | tee -a "$out/summary.txt"
    xz -f "$out/$log.json"
  done <<SHAPES
4096x8192x2048|$p144
2048x8192x2048|$p144
8192x8192x2048|$p144
4096x8192x8192|$p144
4096x8192x2048|tile=128x128 cluster=2x1 kernel=pingpong raster=m swizzle=1
SHAPES
fi
pack
