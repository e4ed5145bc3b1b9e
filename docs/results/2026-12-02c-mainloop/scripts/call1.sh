#!/usr/bin/env bash
# Call 1 of 2026-12-02c (issue 17), one H200.
# 1. OverlapGpu.FourRanks: the last GPU check of ee474e9's one-box-per-band epilogue that the
#    2026-12-02b calls cut off (4 ranks sharing the GPU; ping-pong 128x144 and 128x176 among its plans).
# 2. Where kiln's GEMM loses to cuBLAS at 4096x8192x2048 (1.023-1.036 in every run since 12-01):
#    a K sweep of one given plan (ping-pong 128x144 2x1, the tile cuBLAS's nvjet kernel uses)
#    against cuBLAS, torch.matmul and CUTLASS's twin (same main loop, CUTLASS's epilogue), in the
#    same rounds. A cost per tile (hand-off, epilogue, scheduler) shrinks as K grows; a main-loop
#    deficit stays the same fraction.
# 3. Nsight Compute (SM active cycles min/avg/max: the last wave's idle SMs) on the same plan at K = 2048: the L2 traffic split by source (SMs or the other
#    L2 partition: nvjet moved 1.22 GB through L2 against CUTLASS's 1.55 GB, 2026-12-02 call 4),
#    L2 throughput, and the warp stalls per SASS instruction (SourceCounters) for the four kernels.
# Prepared here: bash scripts/pack_carry.sh build/kiln_gpu_tests build/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-12-02c-mainloop/scripts/call1.sh", carry=["carry"], timeout_s=600)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
KILN_BUILD_DIR=build source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=call1
steps="${STEPS:-four sweep profile}"; DEADLINE=${DEADLINE:-585}
source scripts/device_steps.sh
note "binary: $(cat carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
plan="tile=128x144 cluster=2x1 kernel=pingpong raster=m swizzle=1"
if step four; then
  KILN_TEST_RANKS_PER_GPU=4 capped 170 tests-overlap-four.txt build/kiln_gpu_tests --gtest_filter=OverlapGpu.FourRanks
  grep -E "^\[ +(OK|FAILED|PASSED) |rank [0-9]:" "$out/tests-overlap-four.txt" | head -10 | tee -a "$out/summary.txt"
fi
if step sweep; then
  # 3584x9504 in 128x144 tiles is 28 x 66 = 1848 = 14 x 132 tiles: no partial last wave, where
  # 4096x8192's 1824 tiles leave 24 of 132 SMs idle in the 14th.
  shapes=(); for k in 512 1024 2048 4096 8192; do shapes+=(--shape "4096x8192x$k"); done
  shapes+=(--shape 3584x9504x2048)
  capped 150 sweep.txt python3 scripts/torch_gemm_same_process.py --dtype bf16 --rounds 32 \
    --plan "$plan" --twin --extra-plan "tile=128x128 cluster=2x1 kernel=pingpong raster=m swizzle=1" \
    "${shapes[@]}" --json "$out/sweep.json"
  cut -c1-170 "$out/sweep.txt" >> "$out/summary.txt"
fi
if step profile; then
  metrics=sm__cycles_elapsed.max,sm__cycles_active.min,sm__cycles_active.avg,sm__cycles_active.max,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
  metrics+=,smsp__inst_executed.sum,lts__t_bytes.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct
  metrics+=,lts__throughput.avg.pct_of_peak_sustained_elapsed,'regex:^lts__t_sectors_srcunit_[a-z]+\.sum$'
  metrics+=,'regex:^lts__t_sectors_srcunit_[a-z]+_lookup_(hit|miss)\.sum$'
  capped 90 ncu-l2.csv ncu --clock-control none --nvtx --nvtx-include "profile/" \
    --metrics "$metrics" --csv --page raw \
    python3 scripts/gemm_profile_once.py --shape 4096x8192x2048 --plan "$plan" --plain
  python3 - "$out/ncu-l2.csv" > "$out/ncu-l2.txt" 2>&1 <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
header = next(r for r in rows if "ID" in r[:2])
launches = [r for r in rows if r[0].isdigit()]
for r in launches:
    print(r[0], r[header.index("Kernel Name")][:70])
for j, col in enumerate(header):
    if col.startswith(("sm__", "smsp__", "lts__", "dram__")):
        print(f"{col[:64]:64} " + " ".join(f"{r[j]:>16}" for r in launches))
PY
  cat "$out/ncu-l2.txt" >> "$out/summary.txt"
  capped 150 ncu-source.txt ncu --clock-control none --nvtx --nvtx-include "profile/" \
    --section SourceCounters --section WarpStateStats --import-source no -f -o /tmp/kiln-next/source \
    python3 scripts/gemm_profile_once.py --shape 4096x8192x2048 --plan "$plan" --plain
  capped 60 ncu-source-sass.csv ncu --import /tmp/kiln-next/source.ncu-rep --page source --print-source sass --csv
  note "source page: $(wc -l < "$out/ncu-source-sass.csv") lines, $(du -h /tmp/kiln-next/source.ncu-rep | cut -f1) report"
fi
pack
