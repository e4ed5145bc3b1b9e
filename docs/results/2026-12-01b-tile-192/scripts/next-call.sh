#!/usr/bin/env bash
# Prepared for the next session (issue 17); NOT RUN in 2026-12-01b (its device time was spent).
# Issue 17's table three times with the default search at HEAD (every kernel, ping-pong-swap
# included): bf16, fp16, bf16, each in shuffled order, then the per-shape medians over the three.
# The criterion is every shape within 1.02 of the best cuBLAS; one run carries about ±3% between
# copies of one plan (../2026-12-01-search-race/), so the medians are the figure to report.
# Prepared on the CPU machine:
#   ninja -C build -j2 kiln_gemm_capi
#   bash scripts/pack_carry.sh build/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-12-01b-tile-192/scripts/next-call.sh",
#             carry=["carry"], timeout_s=600)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/c; rm -rf "$out"; mkdir -p "$out"; archive=next
steps="${STEPS:-tables}"; DEADLINE=${DEADLINE:-575}
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
if step tables; then
  run=0
  for dtype in bf16 fp16 bf16; do
    run=$((run + 1))
    capped 185 "table-$run-$dtype.txt" python3 scripts/torch_gemm_same_process.py --dtype "$dtype" \
      --order shuffle --rounds 8 --json "$out/table-$run-$dtype.json"
    cut -c1-150 "$out/table-$run-$dtype.txt" >> "$out/summary.txt"
  done
  python3 docs/results/2026-11-30j-wave-fit/scripts/summarize.py "$out"/*.json 2>&1 | tee -a "$out/summary.txt"
fi
# Not in the default steps (STEPS="ab", a call of its own): the search with 16 stage-3 rounds
# against the default 6, timed in the same rounds. At K = 2048 stage 3's top candidates are within
# 1-2% with a CV of 1.3-3.6% (README section 5), so its pick among them is close to chance.
if step ab; then
  capped 400 ab-sustained-rounds.txt python3 scripts/torch_gemm_same_process.py --dtype bf16 \
    --order shuffle --rounds 8 --second-search sustained-rounds=16 --json "$out/ab-sustained-rounds.json"
  cut -c1-150 "$out/ab-sustained-rounds.txt" >> "$out/summary.txt"
fi
pack
