#!/usr/bin/env bash
# Call 2 of 2026-12-02d (issue 17), one H200: where kiln's ~4 us (6.5k cycles per SM) go at
# 4096x8192x2048 — per tile or per kernel, inside the kernel or between kernels.
#  - scaling: M x 8192 x 2048 for M = 1024 .. 8192 (3.5 .. 27.6 tiles per SM of ping-pong 128x144),
#    kiln, its CUTLASS twin, kiln with the signal deferred, cuBLAS's baseline and torch.matmul,
#    timed in one process (torch_gemm_same_process.py);
#  - Nsight Compute at the same shapes: SM active cycles and tensor-pipe activity per kernel
#    (idle cycles per SM = active - tensor-active, against the tile count);
#  - Nsight Systems at 4096x8192x2048: kernel durations and the gaps between back-to-back kernels.
# Carry: ab/base.so (the default build, 8482c40's kernels). Prepared: bash scripts/pack_carry.sh ab/base.so
# Device: run(command="bash docs/results/2026-12-02d-handoff/scripts/call2.sh", carry=["carry"], timeout_s=420)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
site=$(python3 -c 'import site; print(site.getsitepackages()[0])' 2>/dev/null || true)
for lib in cublas nccl cuda_runtime cuda_nvrtc; do
  [ -d "$site/nvidia/$lib/lib" ] && LD_LIBRARY_PATH="$site/nvidia/$lib/lib:${LD_LIBRARY_PATH:-}"
done
export LD_LIBRARY_PATH
out=/tmp/kiln-next/d; rm -rf "$out"; mkdir -p "$out"; archive=call2
steps="${STEPS:-scaling ncu nsys}"; DEADLINE=${DEADLINE:-400}
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
p144="tile=128x144 cluster=2x1 kernel=pingpong raster=m swizzle=1"
shapes=(1024x8192x2048 2048x8192x2048 4096x8192x2048 8192x8192x2048)
if step scaling; then
  args=(); for s in "${shapes[@]}"; do args+=(--shape "$s"); done
  capped 150 scaling.txt python3 scripts/torch_gemm_same_process.py --lib ab/base.so --rounds 24 \
    --plan "$p144" --twin --extra-plan "$p144 signal=deferred" "${args[@]}" --json "$out/scaling.json"
  grep -E "^ +[0-9]+x|^ {20,}[0-9]|twin|WRONG|correctness" "$out/scaling.txt" | cut -c1-170 | tee -a "$out/summary.txt"
fi
if step ncu; then
  metrics=sm__cycles_elapsed.max,sm__cycles_active.min,sm__cycles_active.avg,sm__cycles_active.max
  metrics+=,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,gpc__cycles_elapsed.avg.per_second
  for s in "${shapes[@]}"; do
    capped 40 "ncu-$s.csv" ncu --clock-control none --nvtx --nvtx-include "profile/" \
      --metrics "$metrics" --csv --page raw \
      python3 scripts/gemm_profile_once.py --lib ab/base.so --shape "$s" --plan "$p144" --plain
    python3 - "$out/ncu-$s.csv" "$s" 2>&1 <<'PY' | tee -a "$out/summary.txt"
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
header = next(r for r in rows if "ID" in r[:2])
col = {c: j for j, c in enumerate(header)}
def num(r, c): return float(r[col[c]].replace(",", ""))
for r in (r for r in rows if r[0].isdigit()):
    act = num(r, "sm__cycles_active.avg"); t = num(r, "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active")
    print(f"{sys.argv[2]} {r[0]} {r[col['Kernel Name']][:44]:44} elapsed.max {num(r, 'sm__cycles_elapsed.max'):9.0f}"
          f" active min/avg/max {num(r, 'sm__cycles_active.min'):8.0f} {act:8.0f} {num(r, 'sm__cycles_active.max'):8.0f}"
          f" tensor {t:5.2f}% idle/SM {act * (1 - t / 100):7.0f} clock {num(r, 'gpc__cycles_elapsed.avg.per_second') / 1e9:.3f} GHz")
PY
  done
fi
if step nsys; then
  nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems*/bin/nsys \
    /usr/local/cuda/nsight-systems*/bin/nsys 2> /dev/null | head -1)
  if [ -z "$nsys" ]; then note "nsys: not on this machine"; else
    capped 90 nsys.txt "$nsys" profile --trace=cuda --sample=none --cpuctxsw=none --force-overwrite=true \
      -o /tmp/kiln-next/gemm python3 scripts/torch_gemm_same_process.py --lib ab/base.so --rounds 4 \
      --settle 0.5 --plan "$p144" --twin --shape 4096x8192x2048
    capped 60 nsys-trace.csv "$nsys" stats --report cuda_gpu_trace --format csv /tmp/kiln-next/gemm.nsys-rep
    python3 - "$out/nsys-trace.csv" 2>&1 <<'PY' | tee -a "$out/summary.txt"
import csv, statistics, sys
rows = list(csv.DictReader(l for l in open(sys.argv[1]) if l.count(",") > 5))
start_key = next(k for k in rows[0] if k.startswith("Start")); dur_key = next(k for k in rows[0] if k.startswith("Duration"))
kernels = [(int(r[start_key]), int(r[dur_key]), r["Name"][:40]) for r in rows if r.get("Name") and "memcpy" not in r["Name"].lower() and "memset" not in r["Name"].lower()]
kernels.sort()
by = {}
for (s0, d0, n0), (s1, d1, n1) in zip(kernels, kernels[1:]):
    if n0 == n1:
        by.setdefault(n0, []).append((d0, s1 - (s0 + d0)))
for name, v in by.items():
    if len(v) < 8: continue
    print(f"nsys {name:40} back-to-back pairs {len(v):4d}: duration median {statistics.median(d for d, _ in v) / 1e3:8.2f} us,"
          f" gap to the next median {statistics.median(g for _, g in v) / 1e3:6.2f} us")
PY
  fi
fi
pack
