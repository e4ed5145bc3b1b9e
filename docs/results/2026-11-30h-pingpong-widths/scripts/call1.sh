#!/usr/bin/env bash
# Call 1 of 2026-11-30h (issue 17), one H200: the ping-pong 128x160 and 128x176 kernels (cuBLAS's
# ping-pong-style widths) against cuBLAS on every configuration and odd shapes, memcheck on the
# four new ones, then the same-process table (torch.matmul, kiln's best-cuBLAS baseline, kiln's
# searched GEMM, and a second kiln GEMM searched without the new widths, in the same rounds).
# Prepared on the CPU machine:
#   ninja -C build -j2 kiln kiln_gpu_tests kiln_gemm_capi
#   bash scripts/pack_carry.sh build/kiln build/kiln_gpu_tests build/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-11-30h-pingpong-widths/scripts/call1.sh",
#             carry=["carry"])
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh
CONFIG_TESTS='SignalingGemmGpu.*:TunerGpu.HostLaunchGeometryMatchesTheKernel' OVERLAP_TESTS=none \
  SANITIZER_TOOLS=memcheck SANITIZER_CONFIG_MATCH='tile=128x1(60|76) ' \
  SECOND_SEARCH='without-tile-n=160,without-tile-n=176' DTYPES='bf16 fp16' \
  bash scripts/device_gemm_configs.sh tests sanitizer same
