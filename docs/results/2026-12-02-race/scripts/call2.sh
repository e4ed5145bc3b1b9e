#!/usr/bin/env bash
# Call 2 of 2026-12-02 (issue 17): the epilogue's direct stores against its staged TMA stores.
# Call 1's K sweep put kiln / cuBLAS at 1.045 (K = 1024) down to 1.012 (K = 8192): a cost per tile.
# build-direct/libkiln_gemm_capi.so is the same tree with KILN_EPILOGUE_DIRECT_STORES defined to 1
# (each thread writes its pairs to the slot buffer with st.global; signaling_epilogue.cuh,
# kDirectStores); build/ has it 0 (the staged TMA stores).
#  ab:     per shape, the search's 3 best plans from build/ and the same plans from build-direct/,
#          in the same process and rounds (--extra-lib), with CUTLASS's twin of the pick;
#  direct: issue 17's table with build-direct/ as kiln (its own search), bf16.
# Prepared on the CPU machine (only the four signaling-GEMM units differ between the two):
#   the default in signaling_epilogue.cuh set to 1; ninja -C build -j2 kiln_gemm_capi;
#   mkdir -p build-direct; cp build/libkiln_gemm_capi.so build-direct/;
#   the default back to 0; ninja -C build -j2 kiln_gemm_capi
#   bash scripts/pack_carry.sh build/libkiln_gemm_capi.so build-direct/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-12-02-race/scripts/call2.sh", carry=["carry"],
#             timeout_s=600)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=call2
steps="${STEPS:-ab direct}"; DEADLINE=${DEADLINE:-580}
source scripts/device_steps.sh
note "binary: $(cat carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
table() {  # table LIMIT NAME ARGS...: one run of the same-process table, its rows in the summary
  local limit=$1 name=$2; shift 2
  capped "$limit" "$name.txt" python3 scripts/torch_gemm_same_process.py --json "$out/$name.json" "$@"
  cut -c1-170 "$out/$name.txt" >> "$out/summary.txt"
}
if step ab; then
  table 300 ab-bf16 --dtype bf16 --rounds 32 --race-top 3 --twin \
    --extra-lib build-direct/libkiln_gemm_capi.so \
    --shape 4096x8192x1024 --shape 4096x8192x2048 --shape 8192x8192x2048 \
    --shape 16384x4096x3584 --shape 1000x8192x8192 --shape 16384x16384x2048 \
    --shape 4096x8192x8192
fi
if step direct; then
  table 200 direct-bf16 --lib build-direct/libkiln_gemm_capi.so --dtype bf16 --rounds 32 \
    --race-top 1
  python3 docs/results/2026-11-30j-wave-fit/scripts/summarize.py "$out"/direct-*.json 2>&1 | tee -a "$out/summary.txt"
fi
pack
