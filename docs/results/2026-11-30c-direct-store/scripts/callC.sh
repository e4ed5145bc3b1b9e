#!/usr/bin/env bash
# 2026-11-30c call C: the H200's practical HBM write ceiling (scripts/hbm_write_ceiling.py: fill_,
# zero_, copy_, mul into a preallocated output) and Nsight Compute on the thin-K GEMMs (kb1-7,
# kb1-9: 4.3 GB written each) to see how close their stores run to it.
cd "$(dirname "$0")/../.." || exit 2
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
head -1 carry/MANIFEST
mkdir -p $OUT /tmp/vcache/units
tar -xJf evolve-set/versus-state/units.tar.xz -C /tmp/vcache/units
timeout 120 python3 scripts/hbm_write_ceiling.py --gib 4 --iters 20 --rounds 3 --json $OUT/write-ceiling.json 2>&1 | tee $OUT/write-ceiling.txt
S=evolve-set/versus-state/set; P=evolve-set/calls/srcA
NCU_BUILD_CACHE=/tmp/vcache NCU_KERNELS='device_kernel' NCU_COUNT=1 NCU_SIZE=kb NCU_REPLAY=application NCU_LIMIT=120 \
  NCU_METRICS=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active \
  timeout 380 bash scripts/device_ncu_candidates.sh kb1-7-matmul-small-k=$S/kb1-7-matmul-small-k/best.cu \
  kb1-7-matmul-small-k=$P/kb1-7-matmul-small-k--pp64x256-tma.cu kb1-9-tall-skinny-matmul=$S/kb1-9-tall-skinny-matmul/best.cu > $OUT/ncu-run.txt 2>&1
echo "ncu exit $? at ${SECONDS}s"; cat $OUT/ncu-summary.txt
