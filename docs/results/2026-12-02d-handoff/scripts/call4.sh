#!/usr/bin/env bash
# Call 4 of 2026-12-02d (issue 17), one H200: does kiln's epilogue cost the other warp group's
# main loop its ~600 idle tensor-pipe cycles per tile (call 2)? Call 3's probes were void: with
# no staging writes the accumulators were dead and ptxas dropped every GMMA (tensor pipe 0%).
# Two diagnostic builds that keep them (epilogue-probe.patch; outputs WRONG by construction):
#   ab/q2.so  KILN_EPILOGUE_PROBE=2: the conversions folded into a register (stored only under a
#             condition no run meets): no staging writes, no TMA stores (the signal still runs),
#   ab/q3.so  KILN_EPILOGUE_PROBE=3: the staging writes (stmatrix) kept, no TMA stores,
# each timed against ab/base.so on the same given plans in one process, then Nsight Compute's SM
# active cycles and tensor-pipe activity for each library at M = 4096 and 8192 (x 8192 x 2048).
# Prepared: bash scripts/pack_carry.sh ab/base.so ab/q2.so ab/q3.so
# Device: run(command="bash docs/results/2026-12-02d-handoff/scripts/call4.sh", carry=["carry"], timeout_s=420)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
site=$(python3 -c 'import site; print(site.getsitepackages()[0])' 2>/dev/null || true)
for lib in cublas nccl cuda_runtime cuda_nvrtc; do
  [ -d "$site/nvidia/$lib/lib" ] && LD_LIBRARY_PATH="$site/nvidia/$lib/lib:${LD_LIBRARY_PATH:-}"
done
export LD_LIBRARY_PATH
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=call4
steps="${STEPS:-q2 q3 ncu lrc}"; DEADLINE=${DEADLINE:-400}
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
p144="tile=128x144 cluster=2x1 kernel=pingpong raster=m swizzle=1"
ab() {  # variant
  capped 120 "ab-$1.txt" python3 scripts/torch_gemm_same_process.py --lib ab/base.so \
    --extra-lib "ab/$1.so" --rounds 24 --plan "$p144" --extra-plan "$p144" \
    --extra-plan "tile=128x192 cluster=2x1 kernel=pingpong raster=m swizzle=1" \
    --shape 2048x8192x2048 --shape 4096x8192x2048 --shape 8192x8192x2048 --shape 4096x8192x8192 \
    --json "$out/ab-$1.json"
  grep -E "extra-lib|^ +[0-9]+x|correctness" "$out/ab-$1.txt" | cut -c1-150 | tee -a "$out/summary.txt"
}
if step q2; then ab q2; fi
if step q3; then ab q3; fi
if step ncu; then
  metrics=sm__cycles_elapsed.max,sm__cycles_active.min,sm__cycles_active.avg,sm__cycles_active.max
  metrics+=,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,gpc__cycles_elapsed.avg.per_second
  for v in base q2 q3; do
    for s in 4096x8192x2048 8192x8192x2048; do
      capped 40 "ncu-$v-$s.csv" ncu --clock-control none --nvtx --nvtx-include "profile/" \
        --metrics "$metrics" --csv --page raw \
        python3 scripts/gemm_profile_once.py --lib "ab/$v.so" --shape "$s" --plan "$p144"
      python3 - "$out/ncu-$v-$s.csv" "$v $s" 2>&1 <<'PY' | tee -a "$out/summary.txt"
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
header = next(r for r in rows if "ID" in r[:2])
col = {c: j for j, c in enumerate(header)}
def num(r, c): return float(r[col[c]].replace(",", ""))
for r in (r for r in rows if r[0].isdigit()):
    act = num(r, "sm__cycles_active.avg"); t = num(r, "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active")
    print(f"{sys.argv[2]} {r[0]} {r[col['Kernel Name']][:40]:40} elapsed.max {num(r, 'sm__cycles_elapsed.max'):8.0f}"
          f" active avg {act:8.0f} tensor {t:5.2f}% idle/SM {act * (1 - t / 100):7.0f} clock {num(r, 'gpc__cycles_elapsed.avg.per_second') / 1e9:.3f} GHz")
PY
    done
  done
fi
# Hopper's L2 request coalescer: which metrics this ncu has, then their sums for nvjet and kiln.
if step lrc; then
  capped 30 lrc-metrics.txt bash -c "ncu --query-metrics --chip gh100 | grep -i -E '^lrc|lrc__'"
  head -40 "$out/lrc-metrics.txt" | tee -a "$out/summary.txt"
  capped 60 ncu-lrc.csv ncu --clock-control none --nvtx --nvtx-include "profile/" \
    --metrics 'regex:^lrc__.*\.sum$,lts__t_sectors_srcunit_tex.sum,lts__t_requests_srcunit_tex.sum' --csv --page raw \
    python3 scripts/gemm_profile_once.py --lib ab/base.so --shape 4096x8192x2048 --plan "$p144"
  python3 - "$out/ncu-lrc.csv" 2>&1 <<'PY' | tee -a "$out/summary.txt"
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
header = next(r for r in rows if "ID" in r[:2])
launches = [r for r in rows if r[0].isdigit()]
for r in launches:
    print(r[0], r[header.index("Kernel Name")][:60])
for j, c in enumerate(header):
    if c.startswith(("lrc__", "lts__")):
        print(f"{c[:60]:60} " + " ".join(f"{r[j]:>16}" for r in launches))
PY
fi
pack
