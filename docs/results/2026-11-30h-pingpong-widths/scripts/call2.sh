#!/usr/bin/env bash
# Call 2 of 2026-11-30h (issue 17), one H200, binaries of call 1 (carry unchanged):
#  1. racecheck on the four new ping-pong kernels (their 16- and 32-column staging boxes);
#  2. Nsight Compute (clocks left alone) on one launch each of the baseline, kiln's GEMM with the
#     configuration call 1's search chose, and torch.matmul: is the new 128x176 / 128x160 ping-pong
#     kernel as busy as cuBLAS's, and how many DRAM and L2 bytes does each move?
#  3. sustained clock, power, cycles and energy per product (scripts/gemm_power_clock.py);
#  4. the same-process table once more in bf16 (a second sample of call 1's).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh
source scripts/device_env.sh > /dev/null
out=/tmp/kiln-call2/c; rm -rf "$out"; mkdir -p "$out"; archive=call2; steps="race ncu power same"
source scripts/device_steps.sh
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
if step race; then
  configs=(); while IFS= read -r c; do configs+=(--config "$c"); done < <(build/kiln overlap gemm --help |
    sed -n 's/^ *"\(tile=.*\)"$/\1/p' | grep -E 'tile=128x1(60|76) ')
  timed 200 sanitizer-racecheck.txt compute-sanitizer --tool racecheck --report-api-errors no \
    --kernel-name kns=device_kernel --print-limit 1000 build/kiln overlap gemm --shape 1000x520x264 \
    "${configs[@]}" -w 1 -n 2 --rounds 1 --caps 6
  grep -E "RACECHECK SUMMARY|correctness" "$out/sanitizer-racecheck.txt" | tee -a "$out/summary.txt"
fi
declare -A plan=(
  [16384x16384x2048]="tile=128x176 cluster=2x1 kernel=pingpong raster=n swizzle=2"
  [4096x8192x2048]="tile=128x160 cluster=1x2 kernel=pingpong raster=m swizzle=2"
  [8192x8192x8192]="tile=128x192 cluster=2x1 kernel=pingpong raster=n swizzle=16")
if step ncu; then
  for s in 16384x16384x2048 4096x8192x2048 8192x8192x8192; do
    timed 120 "ncu-$s.csv" ncu --clock-control none --nvtx --nvtx-include "profile/" \
      --section SpeedOfLight --section WarpStateStats --section LaunchStats \
      --metrics sm__cycles_elapsed.max,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__cycles_active.avg \
      --csv --page details python3 scripts/gemm_profile_once.py --shape "$s" --plan "${plan[$s]}"
    python3 -c 'import csv,sys
for r in csv.reader(open(sys.argv[1])):
    if len(r) > 16 and r[14] in ("Duration", "SM Frequency", "Compute (SM) Throughput", "DRAM Throughput", "dram__bytes_read.sum", "lts__t_bytes.sum", "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", "sm__cycles_elapsed.max"):
        print(r[6][:40], "|", r[14], "|", r[15], r[16])' "$out/ncu-$s.csv" | tee -a "$out/summary.txt"
  done
fi
if step power; then
  for s in 16384x16384x2048 4096x8192x2048; do
    timed 90 "power-$s.txt" python3 scripts/gemm_power_clock.py --dtype bf16 --shape "$s" \
      --plan "${plan[$s]}" --seconds 3 --repeats 2 --json "$out/power-$s.json"
    cat "$out/power-$s.txt" >> "$out/summary.txt"
  done
fi
if step same; then
  timed 200 same-process-bf16.txt python3 scripts/torch_gemm_same_process.py --dtype bf16 \
    --second-search without-tile-n=160,without-tile-n=176 --json "$out/same-process-bf16.json"
  cat "$out/same-process-bf16.txt" >> "$out/summary.txt"
fi
pack
