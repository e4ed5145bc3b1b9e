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
