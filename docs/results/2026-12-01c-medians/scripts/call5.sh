#!/usr/bin/env bash
# 2026-12-01c, call 5: how precise is the table itself? In calls 2-3 two copies of one plan timed
# in the same 8 rounds differed by up to 4%. One bf16 table with 32 rounds (timing is ~1 s of a
# shape's ~10 s; the search is the rest) and the search's pick raced as a given plan
# (--race-top 1: an A/A copy of kiln's GEMM in the same rounds).
# Prepared on the CPU machine: ninja -C build -j2 kiln_gemm_capi;
#   bash scripts/pack_carry.sh build/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-12-01c-medians/scripts/call5.sh", carry=["carry"],
#             timeout_s=380)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-call5c/c; rm -rf "$out"; mkdir -p "$out"; archive=call5
steps="${STEPS:-aa}"; DEADLINE=${DEADLINE:-330}
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
if step aa; then
  capped 310 aa-bf16-32-rounds.txt python3 scripts/torch_gemm_same_process.py --dtype bf16 \
    --order shuffle --rounds 32 --race-top 1 --json "$out/aa-bf16-32-rounds.json"
  cut -c1-150 "$out/aa-bf16-32-rounds.txt" >> "$out/summary.txt"
fi
pack
