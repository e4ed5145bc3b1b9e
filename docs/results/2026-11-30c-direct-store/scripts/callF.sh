#!/usr/bin/env bash
# 2026-11-30c call F: where each sm90 matmul of the set spends its time after the split rewrite
# (2026-11-30b's vector splits and sums, never profiled): Nsight Compute on the first four
# launches (splits, GEMM, slice sums) of each of the 14 at KernelBench's size.
cd "$(dirname "$0")/../.." || exit 2
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
head -1 carry/MANIFEST
mkdir -p /tmp/vcache/units; tar -xJf evolve-set/versus-state/units.tar.xz -C /tmp/vcache/units
S=evolve-set/versus-state/set
srcs=""; for d in $S/kb1-{1,2,3,7,8,9,10,11,13,14,15,16,17,18}-*; do srcs="$srcs $(basename $d)=$d/best.cu"; done
NCU_BUILD_CACHE=/tmp/vcache NCU_KERNELS='split|sum_slices|add_slices|copy_corner|device_kernel' NCU_COUNT=4 NCU_SIZE=kb \
  NCU_REPLAY=application NCU_LIMIT=60 NCU_METRICS=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed \
  timeout 420 bash scripts/device_ncu_candidates.sh $srcs > $OUT/ncu-run.txt 2>&1
echo "ncu exit $? at ${SECONDS}s"
mkdir -p /tmp/xn && tar -xzf $OUT/ncu.tar.gz -C /tmp/xn && python3 docs/results/2026-11-30b-kept-online/scripts/by_kernel.py /tmp/xn/ncu/*.csv | tee $OUT/by-kernel.txt
