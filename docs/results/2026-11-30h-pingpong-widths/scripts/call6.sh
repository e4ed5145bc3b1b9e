#!/usr/bin/env bash
# Call 6 of 2026-11-30h (issue 17), one H200: Nsight Compute on one launch each of the baseline,
# kiln's GEMM, torch.matmul and kiln's CUTLASS twin (same configuration, schedule and main loop,
# CUTLASS's own epilogue; new C API entry kiln_gemm_run_plain), with the warp stall reasons: where
# do kiln's epilogue's 1.5-4% (call 5) go? Launch IDs in the CSVs: 0 baseline, 1 kiln, 2 torch,
# 3 twin. Prepared here: ninja -C build -j2 kiln_gemm_capi;
#   bash scripts/pack_carry.sh build/libkiln_gemm_capi.so; carry ["carry"].
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null
OUT=${OUT:-out}; mkdir -p "$OUT"
run() {  # shape, plan, name
  timeout 120 ncu --clock-control none --nvtx --nvtx-include "profile/" --section SpeedOfLight \
    --section WarpStateStats \
    --metrics sm__cycles_elapsed.max,dram__bytes_read.sum,lts__t_bytes.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active \
    --csv --page details python3 scripts/gemm_profile_once.py --shape "$1" --plan "$2" --plain \
    > "$OUT/ncu-$3.csv" 2> "$OUT/ncu-$3.err"
  echo "$3: exit $?"
  python3 -c 'import csv,sys
for r in csv.reader(open(sys.argv[1])):
    if len(r) > 16 and (r[14].startswith("Stall") or r[14].startswith("Warp Cycles") or r[14] in ("Duration", "SM Frequency", "dram__bytes_read.sum", "lts__t_bytes.sum", "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", "sm__cycles_elapsed.max")):
        print(r[0], r[6][:30], "|", r[14], "|", r[15], r[16])' "$OUT/ncu-$3.csv"
}
run 16384x16384x2048 "tile=128x176 cluster=2x1 kernel=pingpong raster=n swizzle=16" 16k-176-n16
run 4096x8192x2048 "tile=128x160 cluster=1x2 kernel=pingpong raster=m swizzle=2" 4k-160-m2
