#!/usr/bin/env bash
# Call 2 of 2026-12-03b (issue 17), one H200: claimed tiles in the order nvjet claims them.
# nvjet's SASS (2026-12-02c call 1, ncu-source-sass.csv.gz) maps its claimed item to a tile with
# bands of D tiles along the 144-wide dimension walked first, then along M, serpentine between
# bands: consecutive claims share the *non-multicast* operand (A, for a 2x1 cluster that
# multicasts B). kiln's claimed tiles were only ever timed and profiled in the static search's
# orders (raster m, swizzle 1 for 128x144: consecutive items share B, the multicast operand), and
# the static search never keeps swizzled raster-m orders (slow without claims, 2026-12-02d call 5).
# Here: claimed tiles in the orders whose consecutive items share the non-multicast operand
# (2x1 clusters: raster m with swizzle 2-8, raster n swizzle 1; 1x2 clusters: raster n with
# swizzle 2-8, raster m swizzle 1), Nsight Compute's coalescer counters and the A/B per shape.
# Same library as call 1 (claim-ahead 0 = the tile's start, 2026-12-03's claimed scheduler).
# Prepared: bash scripts/pack_carry.sh build/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-12-03b-claim-ahead/scripts/call2.sh", carry=["carry"])
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=${ARCHIVE:-call2}
steps="${STEPS:-lrc ab}"; DEADLINE=${DEADLINE:-560}
source scripts/device_steps.sh
lib=build/libkiln_gemm_capi.so
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
p144="tile=128x144 cluster=2x1 kernel=pingpong"
if step lrc; then
  metrics=sm__cycles_active.avg,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
  metrics+=,lrc__request_sectors_op_read_coalescable.sum,lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum
  metrics+=,lrc__lts2lrc_sectors_op_read.sum,dram__bytes_read.sum,gpu__time_duration.sum
  for v in static-m1 m1 n1 m2 m4 m8 n2; do
    case $v in static-m1) plan="$p144 raster=m swizzle=1" ;; *) plan="$p144 raster=${v:0:1} swizzle=${v:1} scheduler=claimed" ;; esac
    capped 60 "ncu-$v.csv" ncu --clock-control none --nvtx --nvtx-include "profile/" \
      --metrics "$metrics" --csv --page raw \
      python3 scripts/gemm_profile_once.py --lib $lib --shape 4096x8192x2048 --plan "$plan"
    python3 - "$out/ncu-$v.csv" "$v" 2>&1 <<'PY' | tee -a "$out/summary.txt"
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
header = next(r for r in rows if "ID" in r[:2])
col = {c: j for j, c in enumerate(header)}
def num(r, c): return float(r[col[c]].replace(",", ""))
for r in (r for r in rows if r[0].isdigit()):
    act = num(r, "sm__cycles_active.avg"); t = num(r, "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active")
    print(f"{sys.argv[2]:8} {r[0]} {r[col['Kernel Name']][:30]:30} {num(r, 'gpu__time_duration.sum') / 1e3:7.1f} us idle/SM {act * (1 - t / 100):7.0f}"
          f" coalescable {num(r, 'lrc__request_sectors_op_read_coalescable.sum') / 1e6:5.1f} M"
          f" hw-coalesced {num(r, 'lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum') / 1e6:5.1f} M"
          f" L2->LRC {num(r, 'lrc__lts2lrc_sectors_op_read.sum') / 1e6:5.1f} M DRAM {num(r, 'dram__bytes_read.sum') / 1e6:5.0f} MB")
PY
  done
fi
if step ab; then
  # shape | tile and cluster | the static plan's order; then the claimed orders
  while IFS='|' read -r shape config order; do
    extra=()
    for o in m1 n1 m2 m4 m8 n2 n4 n8; do
      extra+=(--extra-plan "$config raster=${o:0:1} swizzle=${o:1} scheduler=claimed")
    done
    capped 80 "ab-$shape-${config// /_}.txt" python3 scripts/torch_gemm_same_process.py --lib $lib \
      --shape "$shape" --plan "$config $order" "${extra[@]}" --rounds 16 \
      --json "$out/ab-$shape-${config// /_}.json"
    grep -E "^ +[0-9]+x|/base|correctness|Error|error" "$out/ab-$shape-${config// /_}.txt" | cut -c1-190 | tee -a "$out/summary.txt"
  done <<'SHAPES'
4096x8192x2048|tile=128x144 cluster=2x1 kernel=pingpong|raster=m swizzle=1
8192x8192x2048|tile=192x128 cluster=1x2 kernel=pingpong|raster=n swizzle=1
8192x8192x2048|tile=128x144 cluster=2x1 kernel=pingpong|raster=m swizzle=1
16384x4096x3584|tile=192x128 cluster=1x2 kernel=pingpong|raster=n swizzle=1
4096x8192x8192|tile=128x144 cluster=2x1 kernel=pingpong|raster=m swizzle=1
4096x7168x4096|tile=128x176 cluster=2x1 kernel=pingpong|raster=m swizzle=1
SHAPES
fi
pack
