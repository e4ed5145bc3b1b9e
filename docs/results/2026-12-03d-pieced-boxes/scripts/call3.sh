#!/usr/bin/env bash
# Call 3 of 2026-12-03d (issue 17), one H200: the pieced store boxes' GPU tests
# (EveryConfigurationMatchesCublas on every pieced configuration, a 64-column and a swapped one,
# whose staging now also goes through store_staging_byte), then issue 17's table in bf16 and fp16.
# Prepared: bash scripts/pack_carry.sh build/libkiln_gemm_capi.so build/kiln_gpu_tests
# Device: run(command="bash docs/results/2026-12-03d-pieced-boxes/scripts/call3.sh", carry=["carry"])
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=${ARCHIVE:-call3}
steps="${STEPS:-configs tables}"; DEADLINE=${DEADLINE:-575}
source scripts/device_steps.sh
note "binary: $(cat carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
if step configs; then
  for c in x144 x160 x176 x320 "tile=128x128 cluster=2x1 kernel=pingpong" "tile=144x128"; do
    KILN_TEST_GEMM_CONFIG="$c" gtest_each 45 "configs-${c// /_}.txt" 'SignalingGemmGpu.EveryConfigurationMatchesCublas'
    grep -E "checking|cases,|FAILED|OK \]|EXITED|slot|model" "$out/configs-${c// /_}.txt" | head -6 | tee -a "$out/summary.txt"
  done
fi
table() {  # name dtype
  capped 215 "table-$1.txt" python3 scripts/torch_gemm_same_process.py --dtype "$2" --rounds 32 \
    --race-top 1 --json "$out/table-$1.json"
  cut -c1-190 "$out/table-$1.txt" >> "$out/summary.txt"
}
if step tables; then
  table bf16 bf16
  table fp16 fp16
  python3 docs/results/2026-11-30j-wave-fit/scripts/summarize.py "$out"/table-*.json 2>&1 | tee -a "$out/summary.txt"
fi
pack
