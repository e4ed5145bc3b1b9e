#!/usr/bin/env bash
# Call 6 of 2026-11-30j (issue 17), one H200: an A/A test of the same-process script's order.
# kiln's GEMM and a "second" kiln GEMM with the same plan (the same kernel) in the same rounds,
# with the rounds' order rotated (as in every table so far: the second always runs right after
# the first) and shuffled (--order shuffle). Any ratio away from 1 is the order's bias.
# Device: run(command="bash docs/results/2026-11-30j-wave-fit/scripts/call6.sh", carry=["carry"])
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-call6/c; rm -rf "$out"; mkdir -p "$out"; archive=call6
steps="${STEPS:-aa}"; DEADLINE=${DEADLINE:-170}
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
plan="tile=128x192 cluster=2x1 kernel=pingpong raster=n swizzle=16"
shapes=(--shape 4096x8192x8192 --shape 8192x8192x8192 --shape 16384x4096x3584 --shape 4096x8192x2048)
if step aa; then
  for order in rotate shuffle; do
    capped 75 "aa-$order.txt" python3 scripts/torch_gemm_same_process.py "${shapes[@]}" \
      --plan "$plan" --second-plan "$plan" --rounds 8 --order "$order" --json "$out/aa-$order.json"
    cut -c1-110 "$out/aa-$order.txt" >> "$out/summary.txt"
  done
fi
pack
