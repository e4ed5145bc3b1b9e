#!/usr/bin/env bash
# Call 3 of 2026-12-02 (issue 17), one H200. Calls 1-2: kiln / cuBLAS falls from 1.045-1.049 at
# K = 1024 to 1.012-1.021 at K = 8192 (4096x8192), and kiln / CUTLASS twin (same main loop,
# CUTLASS's epilogue) from 1.021 to 1.002: kiln's epilogue costs per tile, on top of CUTLASS's
# main loop. Nsight Compute on one launch each of the baseline, kiln's GEMM, torch.matmul and the
# twin (launch IDs 0, 1, 2, 3), with the warp stall reasons, shared-memory wavefronts, dynamic
# shared memory per CTA (the main loop's stage count follows from it) and the tensor pipe.
#  profile: 4096x8192x1024 and 4096x8192x2048 with ping-pong 128x128 1x2 (the search's pick in
#           calls 1-2), 16384x16384x2048 with ping-pong 128x160 2x1 (kiln / twin 1.018 in call 2);
#  table:   issue 17's table once more (bf16), for per-shape medians with call 1's two runs.
# Prepared here: ninja -C build -j2 kiln_gemm_capi; bash scripts/pack_carry.sh build/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-12-02-race/scripts/call3.sh", carry=["carry"], timeout_s=600)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=call3
steps="${STEPS:-profile table}"; DEADLINE=${DEADLINE:-560}
source scripts/device_steps.sh
note "binary: $(cat carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
metrics=sm__cycles_elapsed.max,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
metrics+=,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed.sum
metrics+=,launch__shared_mem_per_block_dynamic,launch__registers_per_thread,dram__bytes_read.sum
profile() {  # shape, plan, name
  capped 120 "ncu-$3.csv" ncu --clock-control none --nvtx --nvtx-include "profile/" \
    --section SpeedOfLight --section WarpStateStats --metrics "$metrics" --csv --page details \
    python3 scripts/gemm_profile_once.py --shape "$1" --plan "$2" --plain
  python3 -c 'import csv,sys
keep = set(sys.argv[2].split(",")) | {"Duration", "SM Frequency"}
for r in csv.reader(open(sys.argv[1])):
    if len(r) > 16 and (r[14].startswith("Stall") or r[14].startswith("Warp Cycles") or r[14] in keep):
        print(r[0], r[6][:30], "|", r[14], "|", r[15], r[16])' "$out/ncu-$3.csv" "$metrics" \
    > "$out/ncu-$3.txt" 2>&1
  cat "$out/ncu-$3.txt" >> "$out/summary.txt"
}
if step profile; then
  profile 4096x8192x1024 "tile=128x128 cluster=1x2 kernel=pingpong raster=m swizzle=4" 4k-k1024
  profile 4096x8192x2048 "tile=128x128 cluster=1x2 kernel=pingpong raster=m swizzle=4" 4k-k2048
  profile 16384x16384x2048 "tile=128x160 cluster=2x1 kernel=pingpong raster=n swizzle=16" 16k-160
fi
if step table; then
  capped 200 table-3-bf16.txt python3 scripts/torch_gemm_same_process.py --dtype bf16 --rounds 32 \
    --race-top 1 --json "$out/table-3-bf16.json"
  cut -c1-170 "$out/table-3-bf16.txt" >> "$out/summary.txt"
fi
pack
