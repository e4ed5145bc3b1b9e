#!/usr/bin/env bash
# Call 1 of 2026-12-03b (issue 17), one H200: when should a cluster claim its next tile?
# claim-ahead=N (src/overlap/sm90_claim_ahead_mainloop.cuh) gives the scheduler its token when N
# k-block loads of the current tile remain, instead of when the tile's loads start (N = 0, the
# kernel's own moment, 2026-12-03's claimed scheduler). Question: do clusters that claim at the
# moment they are about to start the next tile read operand-sharing tiles together, so that
# Hopper's L2 request coalescer merges their reads (nvjet: 12-16 M hardware-coalesced sectors at
# 4096x8192x2048, kiln static ~3 M, claimed at the start 1.0 M), and is the GEMM faster?
# Steps: memcheck of claim-ahead=2 on a small GEMM (several tiles per CTA); Nsight Compute's
# coalescer counters at 4096x8192x2048 for static and claim-ahead 0, 1, 2, 4; the A/B in one
# process per shape (the static plan as --plan, the claimed ones as --extra-plan, 24 rounds,
# every output checked against torch.matmul on NaN-poisoned buffers).
# Prepared: bash scripts/pack_carry.sh build/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-12-03b-claim-ahead/scripts/call1.sh", carry=["carry"])
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=${ARCHIVE:-call1}
steps="${STEPS:-memcheck lrc ab}"; DEADLINE=${DEADLINE:-570}
source scripts/device_steps.sh
lib=build/libkiln_gemm_capi.so
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
p144="tile=128x144 cluster=2x1 kernel=pingpong raster=m swizzle=1"
if step memcheck; then
  capped 90 memcheck.txt compute-sanitizer --tool memcheck --print-limit 20 \
    python3 scripts/gemm_profile_once.py --lib $lib --shape 2000x4096x1024 \
    --plan "$p144 scheduler=claimed claim-ahead=2"
  tail -4 "$out/memcheck.txt" | tee -a "$out/summary.txt"
fi
if step lrc; then
  metrics=sm__cycles_active.avg,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
  metrics+=,lrc__request_sectors_op_read_coalescable.sum,lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum
  metrics+=,lrc__lts2lrc_sectors_op_read.sum,dram__bytes_read.sum,gpu__time_duration.sum
  for v in static ca0 ca1 ca2 ca4; do
    case $v in static) plan=$p144 ;; ca*) plan="$p144 scheduler=claimed claim-ahead=${v#ca}" ;; esac
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
  # shape | the static plan (2026-12-03 call 2's pick, or its static twin)
  while read -r shape plan; do
    extra=()
    for n in 0 1 2 4; do extra+=(--extra-plan "$plan scheduler=claimed claim-ahead=$n"); done
    capped 75 "ab-$shape.txt" python3 scripts/torch_gemm_same_process.py --lib $lib \
      --shape "$shape" --plan "$plan" "${extra[@]}" --rounds 24 --json "$out/ab-$shape.json"
    grep -E "^ +[0-9]+x|plan|correctness|Error|error" "$out/ab-$shape.txt" | cut -c1-220 | tee -a "$out/summary.txt"
  done <<'SHAPES'
4096x8192x2048 tile=128x144 cluster=2x1 kernel=pingpong raster=m swizzle=1
8192x8192x2048 tile=192x128 cluster=1x2 kernel=pingpong raster=n swizzle=1
4096x8192x8192 tile=128x144 cluster=2x1 kernel=pingpong raster=m swizzle=1
1000x8192x8192 tile=128x128 cluster=2x1 kernel=pingpong raster=n swizzle=4 cap=128
16384x4096x3584 tile=192x128 cluster=1x2 kernel=pingpong raster=n swizzle=1
4096x7168x4096 tile=128x176 cluster=2x1 kernel=pingpong raster=m swizzle=1
8192x8192x8192 tile=128x192 cluster=2x1 kernel=pingpong raster=n swizzle=16
SHAPES
fi
pack
