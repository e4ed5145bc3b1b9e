"""Summarises Nsight Compute's SASS source page (ncu --page source --print-source sass --csv):
per kernel, the warp-stall samples by reason and the instructions holding the most samples,
with the opcode mix of the instructions executed. Usage: sass_stalls.py FILE.csv[.gz] [--top N]"""
import argparse
import collections
import csv
import gzip


def kernels(path):
    name, header, rows = None, None, []
    opener = gzip.open if path.endswith(".gz") else open
    for r in csv.reader(opener(path, "rt")):
        if not r:
            continue
        if r[0] == "Kernel Name":
            if name:
                yield name, header, rows
            name, header, rows = r[1], None, []
        elif r[0] == "Address":
            header = r
        elif header:
            rows.append(dict(zip(header, r)))
    if name:
        yield name, header, rows


def num(text):
    try:
        return float(text.replace(",", ""))
    except (ValueError, AttributeError):
        return 0.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    for name, header, rows in kernels(args.csv):
        short = name if len(name) < 60 else name[:40] + "..." + ("(kiln signaling)" if "Signaling" in name else "(CUTLASS epilogue)")
        total = sum(num(r["Warp Stall Sampling (All Samples)"]) for r in rows)
        reasons = [c for c in header if c.startswith("stall_") and "Not Issued" not in c]
        by_reason = {c: sum(num(r[c]) for r in rows) for c in reasons}
        executed = sum(num(r["Instructions Executed"]) for r in rows)
        print(f"== {short}: {len(rows)} SASS instructions, {total:.0f} samples, {executed:.0f} warp instructions executed")
        print("   samples by reason: " + ", ".join(f"{c[6:]} {v / total:.1%}" for c, v in
                                                    sorted(by_reason.items(), key=lambda kv: -kv[1]) if v / total >= 0.005))
        ops = collections.Counter()
        for r in rows:
            op = r["Source"].split()[0] if r["Source"].split() else "?"
            if op.startswith("@"):
                op = r["Source"].split()[1]
            ops[op.split(".")[0]] += num(r["Instructions Executed"])
        print("   executed by opcode: " + ", ".join(f"{op} {v / executed:.1%}" for op, v in ops.most_common(10)))
        top = sorted(rows, key=lambda r: -num(r["Warp Stall Sampling (All Samples)"]))[:args.top]
        for r in top:
            s = num(r["Warp Stall Sampling (All Samples)"])
            main_reasons = sorted(((num(r[c]), c[6:]) for c in reasons), reverse=True)[:2]
            print(f"   {r['Address']:>6} {s / total:6.1%}  {r['Source'][:60]:60} "
                  + ", ".join(f"{c} {v / max(s, 1):.0%}" for v, c in main_reasons if v))


if __name__ == "__main__":
    main()
