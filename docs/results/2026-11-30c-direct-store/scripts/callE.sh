#!/usr/bin/env bash
# 2026-11-30c call E: what binds the thin-K GEMMs (kb1-7, kb1-9) against a compute-bound one
# (kb1-1): L2 read and write sectors and L2 / DRAM throughput (r1), the wgmma pipe's activity (r2).
cd "$(dirname "$0")/../.." || exit 2
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
head -1 carry/MANIFEST
mkdir -p /tmp/vcache/units; tar -xJf evolve-set/versus-state/units.tar.xz -C /tmp/vcache/units
S=evolve-set/versus-state/set; P=evolve-set/calls/srcA
srcs="kb1-7-matmul-small-k=$S/kb1-7-matmul-small-k/best.cu kb1-7-matmul-small-k=$P/kb1-7-matmul-small-k--pp64x256-tma.cu kb1-9-tall-skinny-matmul=$S/kb1-9-tall-skinny-matmul/best.cu kb1-1-square-matmul=$S/kb1-1-square-matmul/best.cu"
base=$OUT
for r in r1 r2; do
  case $r in
    r1) m=gpu__time_duration.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum ;;
    r2) m=gpu__time_duration.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active ;;
  esac
  OUT=$base/$r NCU_BUILD_CACHE=/tmp/vcache NCU_KERNELS='device_kernel' NCU_COUNT=1 NCU_SIZE=kb NCU_REPLAY=application NCU_LIMIT=100 NCU_METRICS=$m \
    timeout 250 bash scripts/device_ncu_candidates.sh $srcs > $base/ncu-$r.txt 2>&1
  echo "$r exit $? at ${SECONDS}s"
  mkdir -p /tmp/x$r && tar -xzf $base/$r/ncu.tar.gz -C /tmp/x$r 2>/dev/null
  python3 - /tmp/x$r/ncu/*.csv <<'PY'
import csv, sys
for path in sys.argv[1:]:
    rows = [r for r in csv.reader(l for l in open(path, errors="replace") if l.startswith('"'))]
    print("==", path.split("/")[-1])
    if len(rows) < 3: print("  no rows"); continue
    for k, u, x in zip(rows[0], rows[1], rows[2]):
        if k.startswith(("gpu__", "lts__", "dram__", "sm__")): print(f"  {k} = {x} {u}")
PY
done
