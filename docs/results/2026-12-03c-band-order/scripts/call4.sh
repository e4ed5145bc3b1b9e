#!/usr/bin/env bash
# Call 4 of 2026-12-03c (issue 17), one H200: issue 17's table in bf16 and fp16 with the GEMM search
# whose claimed twins now run the band order (no swizzle padding), then racecheck of claimed and
# serpentine kernels (the 16-byte answer now carries the cluster tile) if time is left.
# Prepared: ninja -C build -j2 kiln_gemm_capi; bash scripts/pack_carry.sh build/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-12-03c-band-order/scripts/call4.sh", carry=["carry"], timeout_s=600)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=${ARCHIVE:-call4}
steps="${STEPS:-tables racecheck}"; DEADLINE=${DEADLINE:-540}
source scripts/device_steps.sh
note "binary: $(cat carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
table() {  # name dtype
  capped 255 "table-$1.txt" python3 scripts/torch_gemm_same_process.py --dtype "$2" --rounds 32 \
    --race-top 1 --json "$out/table-$1.json"
  cut -c1-190 "$out/table-$1.txt" >> "$out/summary.txt"
}
if step tables; then
  table bf16 bf16
  table fp16 fp16
  python3 docs/results/2026-11-30j-wave-fit/scripts/summarize.py "$out"/table-*.json 2>&1 | tee -a "$out/summary.txt"
fi
if step racecheck; then  # shared-memory hazards of the claimed kernels (answers written by st.async)
  for plan in "tile=128x144 cluster=2x1 kernel=pingpong raster=m swizzle=1 scheduler=claimed" \
              "tile=144x128 cluster=1x2 kernel=pingpong-swap raster=n swizzle=4 scheduler=serpentine"; do
    tag=$(echo "$plan" | cut -d' ' -f1 | tr = -)
    capped 60 "racecheck-$tag.txt" compute-sanitizer --tool racecheck --kernel-name kns=device_kernel \
      --print-limit 100 python3 scripts/gemm_profile_once.py --shape 600x1040x264 --plan "$plan"
    grep -E "RACECHECK SUMMARY|ERROR SUMMARY|Error|error" "$out/racecheck-$tag.txt" | head -5 | tee -a "$out/summary.txt"
  done
fi
pack
