#!/usr/bin/env bash
# Call 3 of 2026-12-02b (issue 17), one H200: issue 17's table at the commit that landed the
# one-box-per-band epilogue and stage 3's schedule diversity (tune::sustained_finalists), in bf16,
# fp16 and bf16 (32 rounds each, balanced order). The search's pick is also timed from
# build-base/ (297c408's epilogue, the same plan) in the same rounds (--race-top 1 --extra-lib).
# Prepared here: ninja -C build -j2 kiln_gemm_capi at the commit;
#   bash scripts/pack_carry.sh build/libkiln_gemm_capi.so build-base/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-12-02b-epilogue/scripts/call3.sh", carry=["carry"], timeout_s=600)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=call3
steps="${STEPS:-tables}"; DEADLINE=${DEADLINE:-590}
source scripts/device_steps.sh
note "binary: $(cat carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
table() {  # name dtype
  capped 200 "table-$1.txt" python3 scripts/torch_gemm_same_process.py --dtype "$2" --rounds 32 \
    --extra-lib build-base/libkiln_gemm_capi.so --race-top 1 --json "$out/table-$1.json"
  cut -c1-170 "$out/table-$1.txt" >> "$out/summary.txt"
}
if step tables; then
  table 1-bf16 bf16
  table 2-fp16 fp16
  table 3-bf16 bf16
  python3 docs/results/2026-11-30j-wave-fit/scripts/summarize.py "$out"/table-*.json 2>&1 | tee -a "$out/summary.txt"
fi
pack
