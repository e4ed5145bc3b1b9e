#!/usr/bin/env bash
# Call 4 of 2026-12-02 (issue 17), one H200. Call 3's profile showed cuBLAS running
# nvjet_sm90_tst_144x128_64x6_1x2 at 4096x8192x2048: in kiln's row-major terms a 128x144 tile with a
# 2x1 cluster and 6 stages, which kiln builds too (ping-pong 128x144 2x1). The same tile, so the
# 3-4% between them is the kernel's code. Nsight Compute on that plan (launch IDs 0 baseline,
# 1 kiln, 2 torch.matmul, 3 CUTLASS twin) with every warp stall reason, shared-memory bank
# conflicts and the instruction mix, at K = 2048 and K = 1024.
# Prepared here: bash scripts/pack_carry.sh build/libkiln_gemm_capi.so (as call 3).
# Device: run(command="bash docs/results/2026-12-02-race/scripts/call4.sh", carry=["carry"], timeout_s=300)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=call4
steps="${STEPS:-profile}"; DEADLINE=${DEADLINE:-280}
source scripts/device_steps.sh
note "binary: $(cat carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
metrics=sm__cycles_elapsed.max,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
metrics+=,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed.sum
metrics+=,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
metrics+=,launch__shared_mem_per_block_dynamic,launch__grid_size,dram__bytes_read.sum,lts__t_bytes.sum
metrics+=,'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'
profile() {  # shape, plan, name
  capped 100 "ncu-$3.csv" ncu --clock-control none --nvtx --nvtx-include "profile/" \
    --metrics "$metrics" --csv --page raw \
    python3 scripts/gemm_profile_once.py --shape "$1" --plan "$2" --plain
  python3 - "$out/ncu-$3.csv" > "$out/ncu-$3.txt" 2>&1 <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
header = next(r for r in rows if "ID" in r[:2])
launches = [r for r in rows if r[0].isdigit()]
names = {r[0]: r[header.index("Kernel Name")][:60] for r in launches}
for i, name in names.items():
    print(i, name)
for j, col in enumerate(header):
    if not (col.startswith(("sm__", "l1tex__", "smsp__inst", "launch__", "dram__", "lts__")) or
            "issue_stalled" in col):
        continue
    values = [r[j] for r in launches]
    try:
        if "issue_stalled" in col and max(float(v.replace(",", "")) for v in values) < 0.05:
            continue
    except ValueError:
        pass
    short = col.replace("smsp__average_warps_issue_stalled_", "stall ").replace("_per_issue_active.ratio", "")
    print(f"{short[:58]:58} " + " ".join(f"{v:>14}" for v in values))
PY
  cat "$out/ncu-$3.txt" >> "$out/summary.txt"
}
if step profile; then
  profile 4096x8192x2048 "tile=128x144 cluster=2x1 kernel=pingpong raster=n swizzle=16" 4k-k2048-144
  profile 4096x8192x1024 "tile=128x144 cluster=2x1 kernel=pingpong raster=n swizzle=16" 4k-k1024-144
fi
pack
