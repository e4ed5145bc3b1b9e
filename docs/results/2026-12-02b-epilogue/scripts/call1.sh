#!/usr/bin/env bash
# Call 1 of 2026-12-02b (issue 17), one H200. Three builds of the GEMM library, the same plans
# timed from two of them in one process and the same rounds (--extra-lib):
#   build-base/  the committed epilogue (HEAD): 16-row boxes of 64/32/16 columns, each thread
#                writing its accumulator pairs with st.shared.b32 (4 bytes each);
#   build-stm/   stm.patch: the same boxes written with stmatrix.x4 (one instruction per 16x16
#                block of the box, a quarter of the shared stores);
#   build-wst/   wide-stm.patch: stmatrix.x4 and, where 64 columns do not divide a warp group's
#                width (144, 160, 176), the whole band as one unswizzled box (one TMA store per
#                16-row band instead of 9, 5 or 11; one buffer per warp).
# Step ab: base against stm or wst on given plans. Step table: issue 17's 12 shapes with kiln's
# search on build-wst, and the search's best plan also timed from build-base (--race-top 1
# --extra-lib): a per-shape A/B of the two epilogues next to the table.
# Prepared here: ninja -C build -j2 kiln_gemm_capi at HEAD, then with each patch applied, each
#   library copied to build-<name>/; bash scripts/pack_carry.sh build-base/libkiln_gemm_capi.so
#   build-stm/libkiln_gemm_capi.so build-wst/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-12-02b-epilogue/scripts/call1.sh", carry=["carry"], timeout_s=480)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=call1
steps="${STEPS:-ab table}"; DEADLINE=${DEADLINE:-450}
source scripts/device_steps.sh
note "binary: $(cat carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
ab() {  # variant shape plan name
  capped 45 "ab-$1-$4.txt" python3 scripts/torch_gemm_same_process.py --dtype bf16 --rounds 40 \
    --lib build-base/libkiln_gemm_capi.so --extra-lib "build-$1/libkiln_gemm_capi.so" \
    --shape "$2" --plan "$3" --extra-plan "$3" --json "$out/ab-$1-$4.json"
  note "-- $1 $4"; grep -v "^#" "$out/ab-$1-$4.txt" | cut -c1-170 >> "$out/summary.txt"
}
if step ab; then
  p144="tile=128x144 cluster=2x1 kernel=pingpong raster=n swizzle=16"
  ab stm 4096x8192x2048 "$p144" 144-k2048
  ab stm 4096x8192x1024 "$p144" 144-k1024
  ab wst 4096x8192x1024 "$p144" 144-k1024
  ab stm 8192x8192x2048 "tile=128x128 cluster=2x1 kernel=pingpong raster=n swizzle=4" 128-8k
  ab stm 4096x7168x4096 "tile=128x176 cluster=2x1 kernel=pingpong raster=m swizzle=1" 176-k4096
  ab wst 16384x16384x2048 "tile=128x160 cluster=2x1 kernel=pingpong raster=n swizzle=16" 160-16k
fi
if step table; then
  capped 280 table-wst-bf16.txt python3 scripts/torch_gemm_same_process.py --dtype bf16 --rounds 32 \
    --lib build-wst/libkiln_gemm_capi.so --extra-lib build-base/libkiln_gemm_capi.so \
    --race-top 1 --json "$out/table-wst-bf16.json"
  cut -c1-170 "$out/table-wst-bf16.txt" >> "$out/summary.txt"
fi
pack
