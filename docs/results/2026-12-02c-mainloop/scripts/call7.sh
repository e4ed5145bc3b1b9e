#!/usr/bin/env bash
# Call 7 of 2026-12-02c (issue 17), one H200: the consumer-loop experiment (the code:
# ../consumer-loop.patch, commit bc96ca8; removed after this call refuted it). Three builds of the C
# API library, the same sources but for -DKILN_CONSUMER_LOOP (src/overlap/sm90_consumer_loop.cuh):
#   ab/base.so  0 (CUTLASS's consumer loop; the 0e698f7 build),
#   ab/v1.so    1 (each k-block's GMMAs atom by atom, CUTLASS's wait),
#   ab/v2.so    2 (atom by atom, the previous group's wait and stage release between the atoms).
# Each variant is timed against base on the same given plans in one process
# (torch_gemm_same_process.py --extra-lib: every extra plan from both libraries, same rounds);
# every output is checked against torch.matmul.
# Prepared here: for v in 1 2: cmake -B build -DKILN_CONSUMER_LOOP=$v && ninja -C build kiln_gemm_capi
#   && cp build/libkiln_gemm_capi.so ab/v$v.so (ab/ git-ignored);
#   bash scripts/pack_carry.sh ab/base.so ab/v1.so ab/v2.so
# Device: run(command="bash docs/results/2026-12-02c-mainloop/scripts/call7.sh", carry=["carry"], timeout_s=400)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
site=$(python3 -c 'import site; print(site.getsitepackages()[0])' 2>/dev/null || true)
for lib in cublas nccl cuda_runtime cuda_nvrtc; do
  [ -d "$site/nvidia/$lib/lib" ] && LD_LIBRARY_PATH="$site/nvidia/$lib/lib:${LD_LIBRARY_PATH:-}"
done
export LD_LIBRARY_PATH
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=call7
steps="${STEPS:-v1 v2}"; DEADLINE=${DEADLINE:-380}
source scripts/device_steps.sh
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
note "libraries: $(ls -l ab/ | tail -n +2 | awk '{print $5, $9}' | tr '\n' ' ')"
p144="tile=128x144 cluster=2x1 kernel=pingpong raster=m swizzle=1"
p128="tile=128x128 cluster=2x1 kernel=pingpong raster=m swizzle=1"
ab() {  # variant
  capped 170 "ab-$1.txt" python3 scripts/torch_gemm_same_process.py --lib ab/base.so \
    --extra-lib "ab/$1.so" --rounds 24 --plan "$p144" --extra-plan "$p144" --extra-plan "$p128" \
    --extra-plan "tile=128x192 cluster=2x1 kernel=pingpong raster=m swizzle=1" \
    --shape 4096x8192x2048 --shape 4096x8192x1024 --shape 8192x8192x2048 --shape 4096x8192x8192 \
    --json "$out/ab-$1.json"
  grep -E "extra-lib|^ +[0-9]+x|WRONG|correctness" "$out/ab-$1.txt" | cut -c1-160 | tee -a "$out/summary.txt"
}
if step v1; then ab v1; fi
if step v2; then ab v2; fi
pack
