#!/usr/bin/env bash
# 2026-11-30b call 5: where the 3xTF32 matmuls spend their time, by kernel (Nsight Compute, one
# candidate call at kb size): the operand splits, the GEMM, the slice sums; the triangle too.
cd "$(dirname "$0")/../.." || exit 2
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
head -1 carry/MANIFEST
mkdir -p /tmp/ncu-cache/units && cp -p prebuilt-units/units/*.o /tmp/ncu-cache/units/ 2>/dev/null; tar -xJf evolve-set/versus-state/units.tar.xz -C /tmp/ncu-cache/units
S=evolve-set/versus-state/set
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
NCU_BUILD_CACHE=/tmp/ncu-cache NCU_KERNELS='split|sum_slices|add_slices|copy_corner|device_kernel' NCU_COUNT=6 NCU_METRICS=$M NCU_SIZE=kb NCU_REPLAY=application NCU_LIMIT=100 timeout 500 \
  bash scripts/device_ncu_candidates.sh kb1-1-square-matmul=$S/kb1-1-square-matmul/best.cu kb1-16-matmul-transposed-a=$S/kb1-16-matmul-transposed-a/best.cu \
  kb1-2-matmul=$S/kb1-2-matmul/best.cu kb1-3-batched-matmul=$S/kb1-3-batched-matmul/best.cu kb1-14-upper-triangular-matmul=$S/kb1-14-upper-triangular-matmul/best.cu \
  kb1-8-matmul-irregular=$S/kb1-8-matmul-irregular/best.cu > $OUT/ncu-run.txt 2>&1
echo "ncu exit $? at ${SECONDS}s"
mkdir -p /tmp/ncux && tar -xzf $OUT/ncu.tar.gz -C /tmp/ncux 2>/dev/null
python3 - /tmp/ncux/ncu/*.csv << 'PY' | tee $OUT/by-kernel.txt
import csv, sys
for path in sys.argv[1:]:
    if path.endswith("-build.txt"): continue
    rows = [r for r in csv.reader(l for l in open(path, errors="replace") if l.startswith('"'))]
    print(path.split("/")[-1][:-4])
    if len(rows) < 3: print("  no rows"); continue
    h, units = rows[0], rows[1]
    f = {"ns": 1e-9, "nsecond": 1e-9, "us": 1e-6, "usecond": 1e-6, "ms": 1e-3, "msecond": 1e-3, "s": 1, "second": 1,
         "byte": 1, "B": 1, "Kbyte": 1e3, "KB": 1e3, "Mbyte": 1e6, "MB": 1e6, "Gbyte": 1e9, "GB": 1e9, "%": 1, "": 1}
    for r in rows[2:]:
        v = {k: (x, u) for k, u, x in zip(h, units, r)}
        def g(m):
            x, u = v.get(m, ("nan", ""))
            try: return float(x.replace(",", "")) * f.get(u, float("nan"))
            except ValueError: return float("nan")
        name = v.get("Kernel Name", ("?", ""))[0]
        name = "cutlass GEMM" if "cutlass" in name else name[:40]
        t, rd, wr = g("gpu__time_duration.sum"), g("dram__bytes_read.sum"), g("dram__bytes_write.sum")
        print(f"  {name:42s} {t*1e6:9.1f} us  read {rd/1e6:8.1f} MB  write {wr/1e6:8.1f} MB  DRAM {g('dram__throughput.avg.pct_of_peak_sustained_elapsed'):.1f}%")
PY
