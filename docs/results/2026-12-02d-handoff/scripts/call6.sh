#!/usr/bin/env bash
# Call 6 of 2026-12-02d (issue 17), one H200: is the L2 request coalescing gap of call 4 general?
# Nsight Compute's LRC and tensor-pipe counters for kiln's search picks of 2026-12-02c's table
# (bf16) against the cuBLAS kernels of the same processes, on four more of issue 17's shapes.
# Carry: ab/base.so. Prepared: bash scripts/pack_carry.sh ab/base.so
# Device: run(command="bash docs/results/2026-12-02d-handoff/scripts/call6.sh", carry=["carry"], timeout_s=300)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
site=$(python3 -c 'import site; print(site.getsitepackages()[0])' 2>/dev/null || true)
for lib in cublas nccl cuda_runtime cuda_nvrtc; do
  [ -d "$site/nvidia/$lib/lib" ] && LD_LIBRARY_PATH="$site/nvidia/$lib/lib:${LD_LIBRARY_PATH:-}"
done
export LD_LIBRARY_PATH
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=call6
steps="${STEPS:-picks}"; DEADLINE=${DEADLINE:-380}
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
picks=("8192x8192x2048|tile=128x192 cluster=2x1 kernel=pingpong raster=m swizzle=1"
       "16384x4096x3584|tile=192x128 cluster=2x1 kernel=pingpong raster=m swizzle=16"
       "16384x8192x4096|tile=128x144 cluster=2x1 kernel=pingpong raster=n swizzle=16"
       "1000x8192x8192|tile=128x128 cluster=2x1 kernel=pingpong raster=m swizzle=2 cap=128")
if step picks; then
  metrics=sm__cycles_active.avg,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
  metrics+=,lrc__request_sectors_op_read_coalescable.sum,lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum
  metrics+=,lrc__lts2lrc_sectors_op_read.sum,dram__bytes_read.sum
  for pick in "${picks[@]}"; do
    shape=${pick%%|*}; plan=${pick#*|}; tag=$shape
    capped 40 "ncu-$tag.csv" ncu --clock-control none --nvtx --nvtx-include "profile/" \
      --metrics "$metrics" --csv --page raw \
      python3 scripts/gemm_profile_once.py --lib ab/base.so --shape "$shape" --plan "$plan"
    python3 - "$out/ncu-$tag.csv" "$shape" 2>&1 <<'PY' | tee -a "$out/summary.txt"
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
header = next(r for r in rows if "ID" in r[:2])
col = {c: j for j, c in enumerate(header)}
def num(r, c): return float(r[col[c]].replace(",", ""))
for r in (r for r in rows if r[0].isdigit()):
    act = num(r, "sm__cycles_active.avg"); t = num(r, "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active")
    print(f"{sys.argv[1].split('ncu-')[-1][:-4]:20} {r[0]} {r[col['Kernel Name']][:34]:34} idle/SM {act * (1 - t / 100):7.0f}"
          f" coalescable {num(r, 'lrc__request_sectors_op_read_coalescable.sum') / 1e6:5.1f} M"
          f" hw-coalesced {num(r, 'lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum') / 1e6:5.1f} M"
          f" L2->LRC {num(r, 'lrc__lts2lrc_sectors_op_read.sum') / 1e6:5.1f} M DRAM {num(r, 'dram__bytes_read.sum') / 1e6:5.0f} MB")
PY
  done
fi
pack
