#!/usr/bin/env bash
# Hardware counters of judged kernels (Nsight Compute), to place an evolved kernel's time: DRAM
# and L2 bytes, instructions, SM throughput and occupancy, one launch each.
#   bash scripts/device_ncu_candidates.sh PROBLEM=SOURCE ...   on the device (carry ["carry", and
#                                                              the sources' folder])
# Writes $OUT/ncu.tar.gz (ncu/<problem>--<source stem>.csv: ncu's raw page; the build's log) and
# $OUT/ncu-summary.txt (one line each: duration, DRAM read/write GB/s, L2 bytes over DRAM bytes,
# instructions, SM throughput %, warps active %).
# Why it is built this way (2026-11-29g call 3): seven sections at KernelBench's size replay the
# kernel ~40 times, each replay saving and restoring the judge's memory (tens of GB); the judge's
# 70-s progress watchdog ended every run, 500 s of device time for nothing. Here: a few metrics
# (one or two passes), the judge's waits raised (--timeout), SIZE small unless asked, one launch.
#   NCU_SIZE (small), NCU_METRICS (below), NCU_KERNELS (the generated kernels' names, a regex),
#   NCU_COUNT (1: the launches profiled, the first that match; the summary line is the first's),
#   NCU_LIMIT (150 s a source), NCU_REPLAY (kernel; application runs the judge once per pass instead of
#   saving and restoring its memory around each replayed launch: for size kb)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
[ $# -gt 0 ] || { echo "usage: $0 PROBLEM=SOURCE ..." >&2; exit 2; }
command -v ncu > /dev/null || { echo "$0: no ncu here; run it on the device" >&2; exit 2; }
[ -d carry ] && bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
o=${OUT:-out}; mkdir -p "$o/ncu"
size=${NCU_SIZE:-small}
metrics=${NCU_METRICS:-gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,smsp__inst_executed.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active}
# The generators' main kernels (the judge's own, e.g. fill_random_kernel, must not match: -c 1).
# The default covers map, scan, pooling, the norms' and losses' row kernels and matvec; for the
# whole-array reductions, softmax, kiln's mma GEMM or CUTLASS, give NCU_KERNELS (e.g.
# 'reduce_pass|reduce_middle', 'softmax_rows', 'gemm_3xtf32_tiles', 'cutlass|device_kernel').
kernels=${NCU_KERNELS:-^(map|scan|strided|norm|grid_norm|tma_norm|loss|matvec|pool|pool_warp_row|pool_planes|pool_sweep|pool_tile)_kernel}
summary="$o/ncu-summary.txt"
echo "device_ncu_candidates on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) at $(date -u +%FT%TZ), size $size" | tee "$summary"
# NCU_BUILD_CACHE: a build cache holding units/ (CUTLASS units compiled ahead), so that a matmul
# source links instead of compiling CUTLASS.
cache=(); [ -n "${NCU_BUILD_CACHE:-}" ] && cache=(--build-cache "$NCU_BUILD_CACHE")
for pair in "$@"; do
  problem=${pair%%=*}; source=${pair#*=}
  [ -f "$source" ] || { echo "$problem: $source: no such file" | tee -a "$summary"; continue; }
  name="$problem--$(basename "${source%.cu}")"
  start=$SECONDS
  # Built first, outside ncu, and judged --in-process: kiln's judge forks its rank (and a child
  # that counts the GPUs) without exec, and under ncu's injected threads such a child hangs
  # (2026-11-29h calls 1 and 4: every source ended at the limit, small size included; in call 4,
  # built outside ncu, ncu "connected" to both children and profiled nothing).
  build/kiln bench candidate --compile-only --reuse-builds --problem "$problem" --source "$source" \
    --build-dir /tmp/ncu-build "${cache[@]}" > "$o/ncu/$name-build.txt" 2>&1 ||
    { echo "$name: build failed (see $o/ncu/$name-build.txt)" | tee -a "$summary"; continue; }
  timeout "${NCU_LIMIT:-150}" ncu --replay-mode "${NCU_REPLAY:-kernel}" --clock-control none --target-processes application-only -k "regex:$kernels" -c "${NCU_COUNT:-1}" \
    --metrics "$metrics" --csv --page raw --print-units base \
    build/kiln bench candidate --problem "$problem" --source "$source" --sizes "$size" -w 1 -n 1 \
    --trials 1 --timing screen --skip-reference-timing --timeout 600 --reuse-builds --in-process \
    --build-dir /tmp/ncu-build "${cache[@]}" > "$o/ncu/$name.csv" 2>&1
  code=$?
  # The raw page: a header row of metric names, a units row, then one row per profiled launch.
  python3 - "$o/ncu/$name.csv" "$name" "$code" "$((SECONDS - start))" << 'EOF' | tee -a "$summary"
import csv, sys
path, name, code, seconds = sys.argv[1:]
rows = [r for r in csv.reader(l for l in open(path, errors="replace") if l.startswith('"'))]
if len(rows) < 3:
    print(f"{name}: ncu exit {code} in {seconds} s, no profiled launch (see {path})")
    sys.exit(0)
head, units, first = rows[0], rows[1], rows[2]
value = {h: (v, u) for h, u, v in zip(head, units, first)}
def get(metric, scale=1.0):
    v, u = value.get(metric, ("", ""))
    try:
        x = float(v.replace(",", ""))
    except ValueError:
        return None
    # --print-units base: seconds as ns and bytes as bytes; other spellings seen in ncu releases
    # are mapped, and a unit not known here is an error, not a silent factor of 1.
    factors = {"ns": 1e-9, "nsecond": 1e-9, "us": 1e-6, "usecond": 1e-6, "ms": 1e-3,
               "msecond": 1e-3, "s": 1.0, "second": 1.0, "byte": 1.0, "B": 1.0, "Kbyte": 1e3,
               "KB": 1e3, "Mbyte": 1e6, "MB": 1e6, "Gbyte": 1e9, "GB": 1e9, "Tbyte": 1e12,
               "TB": 1e12, "inst": 1.0, "%": 1.0, "": 1.0}
    if u not in factors:
        print(f"{name}: {metric}: unit {u!r} not known to this script (see {path})")
        sys.exit(0)
    return x * factors[u] * scale
t = get("gpu__time_duration.sum")
rd, wr, l2 = get("dram__bytes_read.sum"), get("dram__bytes_write.sum"), get("lts__t_bytes.sum")
inst = get("smsp__inst_executed.sum")
sm = get("sm__throughput.avg.pct_of_peak_sustained_elapsed")
warps = get("sm__warps_active.avg.pct_of_peak_sustained_active")
kernel = value.get("Kernel Name", ("?", ""))[0][:40]
def fmt(x, f):
    return "-" if x is None else f.format(x)
dram = None if None in (rd, wr) else rd + wr
print(f"{name}: {kernel} {fmt(t and t * 1e6, '{:.1f}')} us; DRAM read {fmt(rd and t and rd / t / 1e9, '{:.0f}')} GB/s"
      f" write {fmt(wr and t and wr / t / 1e9, '{:.0f}')} GB/s; L2/DRAM bytes {fmt(l2 and dram and l2 / dram, '{:.2f}')};"
      f" inst {fmt(inst and inst / 1e6, '{:.1f}')} M; SM {fmt(sm, '{:.0f}')}%; warps active {fmt(warps, '{:.0f}')}%"
      f" (ncu exit {code}, {seconds} s)")
EOF
done
# One archive: the device brings back only so many files (2026-11-29h call 1 lost every CSV).
tar -czf "$o/ncu.tar.gz" -C "$o" ncu && rm -rf "$o/ncu"
