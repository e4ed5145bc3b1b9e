#!/usr/bin/env python3
"""One line per kernel launch of an Nsight Compute raw CSV (`ncu --csv --page raw --metrics ...`).

The device scripts of issue 17 profile kiln's GEMM beside cuBLAS's in one process and print the
same few derived figures each time (time, idle cycles per SM, the L2 request coalescer's sectors,
DRAM bytes, shared-store bank conflicts); this prints whichever of them the CSV holds, so a script
asks ncu for its metrics and calls this instead of carrying its own parser.

    python3 scripts/ncu_summary.py ncu-static.csv --tag static [--kernel-width 30]

Columns (each only when its metrics are in the CSV):
  time      gpu__time_duration.sum
  idle/SM   sm__cycles_active.avg x (1 - sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active / 100)
  coalescable, hw-coalesced, L2->LRC   lrc__request_sectors_op_read_coalescable.sum,
            lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum, lrc__lts2lrc_sectors_op_read.sum
  DRAM      dram__bytes_read.sum (DRAM written: dram__bytes_write.sum)
  SM cycles sm__cycles_active.avg
  st-conflicts  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
  instructions  smsp__inst_executed.sum
Exits 1 (naming the file) when the CSV has no launch rows, e.g. when the profiled program failed.
"""
import argparse
import csv
import sys

TIME = "gpu__time_duration.sum"
ACTIVE = "sm__cycles_active.avg"
TENSOR = "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"
# (label, metric, divisor, unit, format): printed as "label value unit" when the metric is present.
PLAIN = (
    ("coalescable", "lrc__request_sectors_op_read_coalescable.sum", 1e6, "M", "5.1f"),
    ("hw-coalesced", "lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum", 1e6, "M",
     "5.1f"),
    ("L2->LRC", "lrc__lts2lrc_sectors_op_read.sum", 1e6, "M", "5.1f"),
    ("DRAM", "dram__bytes_read.sum", 1e6, "MB", "5.0f"),
    ("DRAM written", "dram__bytes_write.sum", 1e6, "MB", "5.0f"),
    ("SM cycles", "sm__cycles_active.avg", 1e3, "k", "7.1f"),
    ("st-conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", 1e3, "k", "7.1f"),
    ("instructions", "smsp__inst_executed.sum", 1e6, "M", "6.2f"),
)


def number(text):
    return float(text.replace(",", ""))


def summarize(path, tag, kernel_width):
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if len(r) > 5]
    header = next((r for r in rows if "ID" in r[:2]), None)
    if header is None:
        return [], f"{path}: no ncu header row (did the profiled program run?)"
    col = {name: j for j, name in enumerate(header)}
    lines = []
    for r in rows:
        if not r[0].isdigit():
            continue  # the header and the units row
        fields = [f"{tag:10}", r[0], f"{r[col['Kernel Name']][:kernel_width]:{kernel_width}}"]
        if TIME in col:
            fields.append(f"{number(r[col[TIME]]) / 1e3:8.1f} us")
        if ACTIVE in col and TENSOR in col:
            idle = number(r[col[ACTIVE]]) * (1 - number(r[col[TENSOR]]) / 100)
            fields.append(f"idle/SM {idle:7.0f}")
        for label, metric, divisor, unit, form in PLAIN:
            if metric in col:
                fields.append(f"{label} {number(r[col[metric]]) / divisor:{form}} {unit}")
        lines.append(" ".join(fields))
    if not lines:
        return [], f"{path}: no kernel launch rows"
    return lines, None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", help="ncu --csv --page raw output")
    parser.add_argument("--tag", default="", help="a label printed first on every line")
    parser.add_argument("--kernel-width", type=int, default=30,
                        help="characters of the kernel name to print (>= 8)")
    args = parser.parse_args()
    if args.kernel_width < 8:
        parser.error("--kernel-width must be >= 8")
    try:
        lines, error = summarize(args.csv, args.tag, args.kernel_width)
    except OSError as e:
        print(f"{args.csv}: {e.strerror}", file=sys.stderr)
        return 1
    if error:
        print(error, file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
