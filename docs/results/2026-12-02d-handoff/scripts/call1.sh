#!/usr/bin/env bash
# Call 1 of 2026-12-02d (issue 17), one H200: the ping-pong hand-off experiment
# (src/overlap/sm90_pingpong_handoff.cuh). Three builds of the C API library, the same sources but
# for -DKILN_PINGPONG_HANDOFF:
#   ab/base.so  0 (CUTLASS's consumer loop),
#   ab/v1.so    1 (mma returns right after issuing the last k-block: the other warp group is cued
#                  one k-block earlier),
#   ab/v2.so    2 (as 1, with two committed k-blocks in flight in the loop).
# Each variant is timed against base on the same given plans in one process
# (torch_gemm_same_process.py --extra-lib: every extra plan from both libraries, same rounds);
# every output is checked against torch.matmul.
# Prepared here: for v in 1 2: cmake -B build -DKILN_PINGPONG_HANDOFF=$v && ninja -C build
#   kiln_gemm_capi && cp build/libkiln_gemm_capi.so ab/v$v.so (ab/ git-ignored);
#   bash scripts/pack_carry.sh ab/base.so ab/v1.so ab/v2.so
# Device: run(command="bash docs/results/2026-12-02d-handoff/scripts/call1.sh", carry=["carry"], timeout_s=500)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
# No build/kiln is carried, so device_env.sh's ldd probe cannot decide: put the Python packages'
# CUDA libraries on the path as call 7 of 2026-12-02c did.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
site=$(python3 -c 'import site; print(site.getsitepackages()[0])' 2>/dev/null || true)
for lib in cublas nccl cuda_runtime cuda_nvrtc; do
  [ -d "$site/nvidia/$lib/lib" ] && LD_LIBRARY_PATH="$site/nvidia/$lib/lib:${LD_LIBRARY_PATH:-}"
done
export LD_LIBRARY_PATH
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=call1
steps="${STEPS:-v1 v2 profile}"; DEADLINE=${DEADLINE:-470}
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
note "libraries: $(ls -l ab/ | tail -n +2 | awk '{print $5, $9}' | tr '\n' ' ')"
p144="tile=128x144 cluster=2x1 kernel=pingpong raster=m swizzle=1"
ab() {  # variant
  capped 220 "ab-$1.txt" python3 scripts/torch_gemm_same_process.py --lib ab/base.so \
    --extra-lib "ab/$1.so" --rounds 24 --plan "$p144" --extra-plan "$p144" \
    --extra-plan "tile=128x128 cluster=2x1 kernel=pingpong raster=n swizzle=8 cap=128" \
    --extra-plan "tile=128x192 cluster=2x1 kernel=pingpong raster=m swizzle=1" \
    --extra-plan "tile=192x128 cluster=2x1 kernel=pingpong raster=m swizzle=16" \
    --extra-plan "tile=144x128 cluster=1x2 kernel=pingpong-swap raster=n swizzle=1" \
    --shape 4096x8192x2048 --shape 4096x8192x1024 --shape 8192x8192x2048 \
    --shape 16384x4096x3584 --shape 4096x8192x8192 --shape 8192x8192x8192 \
    --json "$out/ab-$1.json"
  grep -E "extra-lib|^ +[0-9]+x|WRONG|correctness" "$out/ab-$1.txt" | cut -c1-170 | tee -a "$out/summary.txt"
}
if step v1; then ab v1; fi
if step v2; then ab v2; fi
# Nsight Compute, clocks as they run: cycles and tensor-pipe activity of each library's kiln GEMM
# and CUTLASS twin (launches: baseline, kiln, torch, twin) at 4096x8192x2048, ping-pong 128x144.
if step profile; then
  metrics=sm__cycles_elapsed.max,sm__cycles_active.min,sm__cycles_active.avg,sm__cycles_active.max
  metrics+=,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,gpc__cycles_elapsed.avg.per_second
  for v in base v1 v2; do
    capped 60 "ncu-$v.csv" ncu --clock-control none --nvtx --nvtx-include "profile/" \
      --metrics "$metrics" --csv --page raw \
      python3 scripts/gemm_profile_once.py --lib "ab/$v.so" --shape 4096x8192x2048 --plan "$p144" --plain
    python3 - "$out/ncu-$v.csv" "$v" 2>&1 <<'PY' | tee -a "$out/summary.txt"
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
header = next(r for r in rows if "ID" in r[:2])
for r in (r for r in rows if r[0].isdigit()):
    cols = {c: r[j] for j, c in enumerate(header) if c.startswith(("sm__", "gpc__"))}
    print(sys.argv[2], r[0], r[header.index("Kernel Name")][:40], " ".join(f"{k.split('.')[0][-24:]}.{k.split('.')[-1]}={v}" for k, v in cols.items()))
PY
  done
fi
pack
