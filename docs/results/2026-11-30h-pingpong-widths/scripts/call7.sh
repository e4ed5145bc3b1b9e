#!/usr/bin/env bash
# Call 7 of 2026-11-30h (issue 17), one H200, binaries of call 6: call 6 found kiln's ping-pong
# kernel at 11 warp cycles per issued instruction against its CUTLASS twin's 17 (same main loop),
# i.e. ~1.6x the instructions. Which? Nsight Compute's instruction statistics and per-SASS-line
# executed-instruction counts of kiln's GEMM and the twin at 4096x8192x2048 (128x160 1x2 m2).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
OUT=${OUT:-out}; mkdir -p "$OUT"
timeout 200 ncu --clock-control none --nvtx --nvtx-include "profile/" --kernel-name regex:device_kernel \
  --launch-count 2 --section InstructionStats --section SourceCounters --section WarpStateStats \
  --export "$OUT/prof" python3 scripts/gemm_profile_once.py --shape 4096x8192x2048 \
  --plan "tile=128x160 cluster=1x2 kernel=pingpong raster=m swizzle=2" --plain > "$OUT/prof.log" 2>&1
echo "profile: exit $?"; tail -3 "$OUT/prof.log"
ncu --import "$OUT/prof.ncu-rep" --page details --csv > "$OUT/details.csv" 2>&1; echo "details: exit $?"
ncu --import "$OUT/prof.ncu-rep" --page source --print-source sass --csv > "$OUT/sass.csv" 2>&1; echo "sass: exit $?"
ls -la "$OUT"; xz -T4 "$OUT/sass.csv"; rm -f "$OUT/prof.ncu-rep.bak"
python3 -c 'import csv,sys
for r in csv.reader(open(sys.argv[1])):
    if len(r) > 16 and r[0].isdigit() and ("Stall" in r[14] or "Executed Instructions" in r[14] or "Issued Instructions" in r[14]):
        print(r[0], "|", r[14], "|", r[15], r[16])' "$OUT/details.csv" | head -80
