#!/usr/bin/env bash
# Call 2 of 2026-12-02c (issue 17), one H200: racecheck and memcheck of ee474e9's epilogue through
# `kiln overlap gemm` on small shapes (the gtest route needs more than 80 s under racecheck), then
# issue 17's table in fp16 and bf16 for medians (each ~210 s since stage 3 grew; capped 240).
# Carry: kiln and libkiln_gemm_capi.so (~9 MB compressed; the device refused 13 MB).
# Prepared: ninja -C build -j2 kiln kiln_gemm_capi;
#   bash scripts/pack_carry.sh build/kiln build/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-12-02c-mainloop/scripts/call2.sh", carry=["carry"], timeout_s=600)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=call2
steps="${STEPS:-sanitizers tables}"; DEADLINE=${DEADLINE:-590}
source scripts/device_steps.sh
note "binary: $(cat carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
if step sanitizers; then
  capped 80 racecheck.txt compute-sanitizer --tool racecheck --report-api-errors no \
    --print-limit 1000 build/kiln overlap gemm --shape 600x520x264 \
    --config "tile=128x144 cluster=2x1 kernel=pingpong" --config "tile=128x320 cluster=2x1 kernel=coop-n" \
    -w 1 -n 2 --rounds 1 --caps 6
  grep -E "RACECHECK SUMMARY|correctness" "$out/racecheck.txt" | tee -a "$out/summary.txt"
fi
table() {  # name dtype
  capped 240 "table-$1.txt" python3 scripts/torch_gemm_same_process.py --dtype "$2" --rounds 32 \
    --race-top 1 --json "$out/table-$1.json"
  cut -c1-170 "$out/table-$1.txt" >> "$out/summary.txt"
}
if step tables; then
  table fp16 fp16
  table bf16 bf16
  python3 docs/results/2026-11-30j-wave-fit/scripts/summarize.py "$out"/table-*.json 2>&1 | tee -a "$out/summary.txt"
fi
pack
