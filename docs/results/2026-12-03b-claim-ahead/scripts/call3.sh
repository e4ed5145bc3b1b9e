#!/usr/bin/env bash
# Call 3 of 2026-12-03b (issue 17), one H200: a bank-conflict-free staging of the epilogue's
# whole-band boxes (144, 160 and 176 columns). nvjet stages its epilogue without shared-store
# bank conflicts (221 k against kiln's 576 k at 4096x8192x2048, 2026-12-02 calls 3-4); kiln's
# unswizzled 16 x 144 box puts stmatrix rows r and r + 4 in the same banks. The split build stages
# the band in parts with an odd number of 16-byte chunks per row (144, 176: halves; 160: quarters)
# and stores them with one 3-D TMA store (store_box_parts, slot_store_map.hpp).
#   ab/base.so   HEAD's library (c1c14c4: src identical to b876f64)
#   build/libkiln_gemm_capi.so   the split build (KILN_EPILOGUE_SPLIT_BAND=1, uncommitted)
# Steps: memcheck of the split build on the four whole-band configurations; Nsight Compute's
# shared-store bank conflicts and time, both builds, at 4096x8192x2048; the A/B (each plan timed
# from both libraries in the same rounds; outputs checked against torch.matmul).
# Prepared: bash scripts/pack_carry.sh ab/base.so build/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-12-03b-claim-ahead/scripts/call3.sh", carry=["carry"])
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=${ARCHIVE:-call3}
steps="${STEPS:-memcheck ncu ab}"; DEADLINE=${DEADLINE:-560}
source scripts/device_steps.sh
split=build/libkiln_gemm_capi.so; base=ab/base.so
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
if step memcheck; then
  for plan in "tile=128x144 cluster=2x1 kernel=pingpong raster=m swizzle=1" \
              "tile=128x160 cluster=2x1 kernel=pingpong raster=m swizzle=1" \
              "tile=128x176 cluster=2x1 kernel=pingpong raster=m swizzle=1 scheduler=claimed" \
              "tile=128x320 cluster=2x1 kernel=coop-n raster=n swizzle=1"; do
    tag=$(echo "$plan" | cut -d' ' -f1 | tr = -)
    capped 60 "memcheck-$tag.txt" compute-sanitizer --tool memcheck --print-limit 10 \
      python3 scripts/gemm_profile_once.py --lib $split --shape 1000x2880x512 --plan "$plan"
    note "$tag: $(grep -E "ERROR SUMMARY" "$out/memcheck-$tag.txt" | tail -1)"
  done
fi
if step ncu; then
  metrics=gpu__time_duration.sum,sm__cycles_active.avg,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
  metrics+=,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__inst_executed.sum
  for v in base split; do
    lib=$base; [ $v = split ] && lib=$split
    capped 60 "ncu-$v.csv" ncu --clock-control none --nvtx --nvtx-include "profile/" \
      --metrics "$metrics" --csv --page raw \
      python3 scripts/gemm_profile_once.py --lib $lib --shape 4096x8192x2048 \
      --plan "tile=128x144 cluster=2x1 kernel=pingpong raster=m swizzle=1"
    python3 - "$out/ncu-$v.csv" "$v" 2>&1 <<'PY' | tee -a "$out/summary.txt"
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
header = next(r for r in rows if "ID" in r[:2])
col = {c: j for j, c in enumerate(header)}
def num(r, c): return float(r[col[c]].replace(",", ""))
for r in (r for r in rows if r[0].isdigit()):
    act = num(r, "sm__cycles_active.avg"); t = num(r, "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active")
    print(f"{sys.argv[2]:6} {r[0]} {r[col['Kernel Name']][:30]:30} {num(r, 'gpu__time_duration.sum') / 1e3:7.1f} us idle/SM {act * (1 - t / 100):7.0f}"
          f" st-bank-conflicts {num(r, 'l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum') / 1e3:7.1f} k"
          f" instructions {num(r, 'smsp__inst_executed.sum') / 1e6:6.2f} M")
PY
  done
fi
if step ab; then
  while IFS='|' read -r shape plan; do
    capped 60 "ab-$shape.txt" python3 scripts/torch_gemm_same_process.py --lib $base \
      --extra-lib $split --shape "$shape" --plan "$plan" --extra-plan "$plan" --rounds 24 \
      --json "$out/ab-$shape.json"
    grep -E "^ +[0-9]+x|extra-lib|correctness|Error|error" "$out/ab-$shape.txt" | cut -c1-180 | tee -a "$out/summary.txt"
  done <<'SHAPES'
4096x8192x2048|tile=128x144 cluster=2x1 kernel=pingpong raster=m swizzle=1
8192x8192x2048|tile=128x144 cluster=2x1 kernel=pingpong raster=m swizzle=1
4096x8192x8192|tile=128x144 cluster=2x1 kernel=pingpong raster=m swizzle=1
4096x8192x1024|tile=128x144 cluster=2x1 kernel=pingpong raster=m swizzle=1
4096x7168x4096|tile=128x176 cluster=2x1 kernel=pingpong raster=m swizzle=1 scheduler=claimed
4096x7168x4096|tile=128x160 cluster=2x1 kernel=pingpong raster=m swizzle=1 scheduler=claimed
16384x16384x2048|tile=128x160 cluster=2x1 kernel=pingpong raster=n swizzle=4
16384x4096x3584|tile=128x320 cluster=2x1 kernel=coop-n raster=n swizzle=16
SHAPES
fi
pack
