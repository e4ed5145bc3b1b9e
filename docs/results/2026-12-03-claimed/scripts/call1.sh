#!/usr/bin/env bash
# Call 1 of 2026-12-03 (issue 17; 2026-12-02e's call 1 failed at can_implement, fixed), one H200: tiles claimed from a global counter
# (src/overlap/sm90_claimed_tile_scheduler.cuh) against CUTLASS's static persistent schedule.
#   ab/base.so     the default build (static schedule; the kernels of 8482c40)
#   ab/claimed.so  the same sources built with KILN_CLAIMED_TILES=1 (every ping-pong kernel claims)
#   ab/claimed_gpu_tests  kiln_gpu_tests of that build
# Steps: memcheck of the claimed kernel on a small GEMM; Nsight Compute's L2 request-coalescer
# and tensor-pipe counters for both at 4096x8192x2048 (the question: does claiming raise the
# hardware-coalesced read sectors towards nvjet's 12-16 M?); the A/B on issue 17's 12 shapes
# (the search's pick of the base library, timed from both libraries in the same rounds).
# Prepared: bash scripts/pack_carry.sh ab/base.so ab/claimed.so ab/claimed_gpu_tests
# Device: run(command="bash docs/results/2026-12-03-claimed/scripts/call1.sh", carry=["carry"], timeout_s=600)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=${ARCHIVE:-call1}
steps="${STEPS:-memcheck lrc ab tests}"; DEADLINE=${DEADLINE:-570}
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
p144="tile=128x144 cluster=2x1 kernel=pingpong raster=m swizzle=1"
if step memcheck; then
  capped 90 memcheck.txt compute-sanitizer --tool memcheck --print-limit 20 \
    python3 scripts/gemm_profile_once.py --lib ab/claimed.so --shape 1024x4096x512 --plan "$p144"
  tail -4 "$out/memcheck.txt" | tee -a "$out/summary.txt"
fi
if step lrc; then
  metrics=sm__cycles_active.avg,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
  metrics+=,lrc__request_sectors_op_read_coalescable.sum,lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum
  metrics+=,lrc__lts2lrc_sectors_op_read.sum,dram__bytes_read.sum,gpu__time_duration.sum
  for v in base claimed; do
    for plan in "$p144" "tile=128x192 cluster=2x1 kernel=pingpong raster=m swizzle=1"; do
      [ "$v" = base ] && [ "$plan" != "$p144" ] && continue  # base 128x192: 2026-12-02e call 1
      tag=$v-$(echo "$plan" | cut -d' ' -f1 | tr = -)
      capped 60 "ncu-$tag.csv" ncu --clock-control none --nvtx --nvtx-include "profile/" \
        --metrics "$metrics" --csv --page raw \
        python3 scripts/gemm_profile_once.py --lib "ab/$v.so" --shape 4096x8192x2048 --plan "$plan"
      python3 - "$out/ncu-$tag.csv" "$tag" 2>&1 <<'PY' | tee -a "$out/summary.txt"
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
header = next(r for r in rows if "ID" in r[:2])
col = {c: j for j, c in enumerate(header)}
def num(r, c): return float(r[col[c]].replace(",", ""))
for r in (r for r in rows if r[0].isdigit()):
    act = num(r, "sm__cycles_active.avg"); t = num(r, "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active")
    print(f"{sys.argv[2]:22} {r[0]} {r[col['Kernel Name']][:30]:30} {num(r, 'gpu__time_duration.sum') / 1e3:7.1f} us idle/SM {act * (1 - t / 100):7.0f}"
          f" coalescable {num(r, 'lrc__request_sectors_op_read_coalescable.sum') / 1e6:5.1f} M"
          f" hw-coalesced {num(r, 'lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum') / 1e6:5.1f} M"
          f" L2->LRC {num(r, 'lrc__lts2lrc_sectors_op_read.sum') / 1e6:5.1f} M DRAM {num(r, 'dram__bytes_read.sum') / 1e6:5.0f} MB")
PY
    done
  done
fi
if step ab; then
  capped 330 ab.txt python3 scripts/torch_gemm_same_process.py --lib ab/base.so \
    --extra-lib ab/claimed.so --race-top 1 --rounds 24 --json "$out/ab.json"
  grep -E "extra-lib|^ +[0-9]+x|correctness|Error|error" "$out/ab.txt" | cut -c1-200 | tee -a "$out/summary.txt"
fi
if step tests; then  # the claimed build's GPU tests (every configuration against cuBLAS, the search)
  capped 150 tests.txt ab/claimed_gpu_tests --gtest_filter="${TESTS:-SignalingGemmGpu.*:OverlapGpu.OneRank:OverlapContiguousRowsGpu.OneRank:TunerGpu.HostLaunchGeometryMatchesTheKernel}"
  grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) +\]|tests ran" "$out/tests.txt" | tee -a "$out/summary.txt"
fi
pack
