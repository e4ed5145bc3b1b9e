#!/usr/bin/env bash
# Issue 17, 2026-12-01c, call 3: call 2's A/B again, in fp16 and in bf16 (the default search
# against one whose stage 3 has no 300 ms warm-up and 16 rounds instead of 6, timed in the same
# rounds), so that the A/B rests on three runs rather than one.
# Prepared on the CPU machine: as call 2 (only build/libkiln_gemm_capi.so is used).
# Device: run(command="bash docs/results/2026-12-01c-medians/scripts/call3.sh", carry=["carry"],
#             timeout_s=600)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-call3c/c; rm -rf "$out"; mkdir -p "$out"; archive=call3
steps="${STEPS:-ab}"; DEADLINE=${DEADLINE:-560}
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
if step ab; then
  for dtype in fp16 bf16; do
    capped 270 "ab-$dtype.txt" python3 scripts/torch_gemm_same_process.py --dtype "$dtype" \
      --order shuffle --rounds 8 --second-search sustained-warmup-ms=0,sustained-rounds=16 \
      --json "$out/ab-$dtype.json"
    cut -c1-150 "$out/ab-$dtype.txt" >> "$out/summary.txt"
  done
fi
pack
