#!/usr/bin/env bash
# Call 3 of 2026-11-30h (issue 17), one H200, binaries of call 1 (carry unchanged): does the
# tile order's DRAM traffic cost kiln the clock under the power cap?
#  1. Nsight Compute on one launch of kiln's ping-pong 128x176 2x1 at 16384x16384x2048 in four
#     orders (raster n swizzle 2, the one call 1's search chose and call 2 profiled; n8; n16; m16)
#     and of ping-pong 128x192 2x1 at 8192^3 in n8 and m8: DRAM and L2 bytes, cycles, tensor-pipe
#     activity, against the host model's predictions (/tmp/dram.py, then src/tune's model);
#  2. sustained clock, power, cycles and energy per product for n2 and n16 at 16384x16384x2048;
#  3. racecheck on the four new ping-pong kernels with every kernel instrumented (call 2's
#     kernel-name filter made the sanitizer fail in cuBLAS's kernels, as in 2026-11-24 runs 2-3).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh
source scripts/device_env.sh > /dev/null
out=/tmp/kiln-call3/c; rm -rf "$out"; mkdir -p "$out"; archive=call3; steps="ncu power race"
source scripts/device_steps.sh
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
profile() {  # shape, plan, log name
  timed 90 "$3.csv" ncu --clock-control none --nvtx --nvtx-include "profile/" --section SpeedOfLight \
    --metrics sm__cycles_elapsed.max,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active \
    --csv --page details python3 scripts/gemm_profile_once.py --shape "$1" --plan "$2"
  python3 -c 'import csv,sys
for r in csv.reader(open(sys.argv[1])):
    if len(r) > 16 and r[14] in ("Duration", "SM Frequency", "dram__bytes_read.sum", "lts__t_bytes.sum", "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", "sm__cycles_elapsed.max"):
        print(sys.argv[2], "|", r[6][:40], "|", r[14], "|", r[15], r[16])' "$out/$3.csv" "$3" | tee -a "$out/summary.txt"
}
if step ncu; then
  for o in "n 2" "n 8" "n 16" "m 16"; do
    set -- $o
    profile 16384x16384x2048 "tile=128x176 cluster=2x1 kernel=pingpong raster=$1 swizzle=$2" "ncu-16k-176-$1$2"
  done
  for o in "n 8" "m 8"; do
    set -- $o
    profile 8192x8192x8192 "tile=128x192 cluster=2x1 kernel=pingpong raster=$1 swizzle=$2" "ncu-8k-192-$1$2"
  done
fi
if step power; then
  for o in "n 2" "n 16"; do
    set -- $o
    timed 90 "power-16k-176-$1$2.txt" python3 scripts/gemm_power_clock.py --dtype bf16 --shape 16384x16384x2048 \
      --plan "tile=128x176 cluster=2x1 kernel=pingpong raster=$1 swizzle=$2" --seconds 3 --repeats 2 \
      --json "$out/power-16k-176-$1$2.json"
    cat "$out/power-16k-176-$1$2.txt" >> "$out/summary.txt"
  done
fi
if step race; then
  configs=(); while IFS= read -r c; do configs+=(--config "$c"); done < <(build/kiln overlap gemm --help |
    sed -n 's/^ *"\(tile=.*\)"$/\1/p' | grep -E 'tile=128x1(60|76) ')
  timed 240 sanitizer-racecheck.txt compute-sanitizer --tool racecheck --report-api-errors no \
    --print-limit 100000 build/kiln overlap gemm --shape 1000x520x264 "${configs[@]}" -w 1 -n 2 --rounds 1 --caps 6
  grep -E "RACECHECK SUMMARY|correctness" "$out/sanitizer-racecheck.txt" | tee -a "$out/summary.txt"
  note "racecheck report lines naming kiln/CUTLASS kernels: $(grep -c 'device_kernel' "$out/sanitizer-racecheck.txt"), naming cuBLAS nvjet kernels: $(grep -c 'nvjet' "$out/sanitizer-racecheck.txt")"
fi
pack
