#!/usr/bin/env bash
# Call 4 of 2026-12-03d (issue 17), one H200: the pieced store boxes against 8e4fee4's library on
# the pairs where 2026-12-03b's similar staging (unswizzled halves, one 3-D store) was slower:
# 8192x8192x2048 ping-pong 128x144 2x1 (1.023), 16384x4096x3584 coop-n 128x320 (1.030),
# 4096x7168x4096 128x160 2x1 claimed (1.013). Same plan from both libraries, same process.
# Prepared: cp build/libkiln_gemm_capi.so ab/pieced-8681bec.so;
#   bash scripts/pack_carry.sh ab/pieced-8681bec.so ab/base-8e4fee4.so
# Device: run(command="bash docs/results/2026-12-03d-pieced-boxes/scripts/call4.sh", carry=["carry"])
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=${ARCHIVE:-call4}
steps="${STEPS:-ab}"; DEADLINE=${DEADLINE:-240}
source scripts/device_steps.sh
lib=ab/pieced-8681bec.so base=ab/base-8e4fee4.so
note "binary: $(cat carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
if step ab; then
  while IFS='|' read -r shape plan; do
    log="ab-$shape-$(echo "$plan" | cut -d' ' -f1,3 | tr ' =' '__')"
    capped 70 "$log.txt" python3 scripts/torch_gemm_same_process.py --lib $lib --shape "$shape" \
      --plan "$plan" --extra-lib $base --extra-plan "$plan" --rounds 24 --json "$out/$log.json"
    grep -E "^ +[0-9]+x|/base|correctness|Error|error" "$out/$log.txt" | cut -c1-190 | tee -a "$out/summary.txt"
  done <<'SHAPES'
8192x8192x2048|tile=128x144 cluster=2x1 kernel=pingpong raster=m swizzle=1
16384x4096x3584|tile=128x320 cluster=2x1 kernel=coop-n raster=n swizzle=16
4096x7168x4096|tile=128x160 cluster=2x1 kernel=pingpong raster=m swizzle=1 scheduler=claimed
SHAPES
fi
pack
