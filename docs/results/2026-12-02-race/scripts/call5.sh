#!/usr/bin/env bash
# Call 5 of 2026-12-02 (issue 17), one H200. Call 4: on ping-pong 128x144 2x1 at K = 1024 kiln's
# GEMM took 5% more cycles than its CUTLASS twin (tensor pipe 86.3% against 90.5%), with a
# membar stall the twin does not have: the eager signal waits for the tile's stores to reach
# global memory (cp.async.bulk.wait_group 0), then a named barrier and a GPU-scope fence, inside
# the epilogue that must finish within the other warp group's main loop (~9k cycles at K = 1024).
# A deferred signal counts the tile at the CTA's next epilogue instead (signal=deferred, which the
# overlap runtime's plans already take). Here: the search's 2 best plans, eager (as searched) and
# deferred, in the same rounds (--race-deferred; the C API now honours a given plan's signal=).
# Prepared here: ninja -C build -j2 kiln_gemm_capi; bash scripts/pack_carry.sh build/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-12-02-race/scripts/call5.sh", carry=["carry"], timeout_s=340)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=call5
steps="${STEPS:-deferred}"; DEADLINE=${DEADLINE:-320}
source scripts/device_steps.sh
note "binary: $(cat carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
if step deferred; then
  capped 250 deferred-bf16.txt python3 scripts/torch_gemm_same_process.py --dtype bf16 --rounds 32 \
    --race-top 2 --race-deferred --json "$out/deferred-bf16.json" \
    --shape 4096x8192x1024 --shape 4096x8192x2048 --shape 8192x8192x2048 \
    --shape 16384x4096x3584 --shape 1000x8192x8192 --shape 4096x8192x8192
  cut -c1-170 "$out/deferred-bf16.txt" >> "$out/summary.txt"
fi
pack
