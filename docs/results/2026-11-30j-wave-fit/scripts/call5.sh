#!/usr/bin/env bash
# Call 5 of 2026-11-30j (issue 17), one H200: issue 17's table once more in bf16 and fp16, no second
# search, for more runs of the same binary (calls 1, 3 and 4 had one each per dtype or a second
# search beside it).
# Device: run(command="bash docs/results/2026-11-30j-wave-fit/scripts/call5.sh", carry=["carry"])
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-call5/c; rm -rf "$out"; mkdir -p "$out"; archive=call5
steps="${STEPS:-same}"; DEADLINE=${DEADLINE:-290}
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
if step same; then
  for dtype in bf16 fp16; do
    capped 135 "same-process-$dtype-again.txt" python3 scripts/torch_gemm_same_process.py \
      --dtype "$dtype" --json "$out/same-process-$dtype-again.json"
    cat "$out/same-process-$dtype-again.txt" >> "$out/summary.txt"
  done
fi
pack
