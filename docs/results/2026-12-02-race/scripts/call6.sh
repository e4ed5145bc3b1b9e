#!/usr/bin/env bash
# Call 6 of 2026-12-02 (issue 17), one H200. NOT RUN: the session's device time ran out (215 s
# left, too little to start a machine); prepared for the next session. Call 4:
# kiln's epilogue on ping-pong 128x144 executes 15% more instructions than CUTLASS's and takes 5%
# more cycles at K = 1024; a 144-column warp group is stored in nine 16x16 boxes per 16-row band,
# each with its own buffer wait, two warp syncs, a fence and a TMA store. build-wide/ stores the
# band as one unswizzled 16x144 box (160, 176 likewise; `wide-box.patch` in this folder, not
# committed); build-base/ is the committed epilogue (d955b15). The same given plan from both
# libraries in the same process and rounds (--extra-lib); kiln's own row is build-base/'s.
# Prepared here: build-base/ = build/libkiln_gemm_capi.so at d955b15; wide-box.patch applied,
#   ninja -C build -j2 kiln_gemm_capi, copied to build-wide/;
#   bash scripts/pack_carry.sh build-base/libkiln_gemm_capi.so build-wide/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-12-02-race/scripts/call6.sh", carry=["carry"], timeout_s=130)
# (A fresh session rebuilds both libraries: build-base/ from HEAD, build-wide/ with wide-box.patch.)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=call6
steps="${STEPS:-wide}"; DEADLINE=${DEADLINE:-110}
source scripts/device_steps.sh
note "binary: $(cat carry/MANIFEST)"
ab() {  # shape plan name
  capped 40 "wide-$3.txt" python3 scripts/torch_gemm_same_process.py --dtype bf16 --rounds 32 \
    --lib build-base/libkiln_gemm_capi.so --extra-lib build-wide/libkiln_gemm_capi.so \
    --shape "$1" --plan "$2" --extra-plan "$2" --json "$out/wide-$3.json"
  cut -c1-150 "$out/wide-$3.txt" | grep -v "^#" >> "$out/summary.txt"
}
if step wide; then
  ab 4096x8192x2048 "tile=128x144 cluster=2x1 kernel=pingpong raster=n swizzle=16" 144-k2048
  ab 4096x8192x1024 "tile=128x144 cluster=2x1 kernel=pingpong raster=n swizzle=16" 144-k1024
  ab 4096x7168x4096 "tile=128x176 cluster=2x1 kernel=pingpong raster=m swizzle=1" 176-k4096
  ab 16384x16384x2048 "tile=128x160 cluster=2x1 kernel=pingpong raster=n swizzle=16" 160-16k
fi
pack
