#!/usr/bin/env python3
"""Issue 24: a new 2xH200 run beside the recorded 2xH200 figures, in one markdown table.

Usage: python3 scripts/compare_x2_regression.py NEW_DIR [NEW_DIR ...] [--brief] [--after-from-before]
NEW_DIR is the unpacked x2/ folder of scripts/device_x2_regression.sh (x2.tar.gz), one per call
(a file is taken from the first folder that has it); any subset of the steps may have run (a
missing file gives a "not run" row). The recorded runs, under
docs/results/, came from the same commands:
  overlap run 12: RS sweep and PyTorch; overlap run 11: AR sweep; tuner run 7: validate, compare
  and --plan auto (its profiles are the built-in ones); suite run 7: pkb; suite run 6: candidates;
  issue 24 run 1: --plan auto from the built-in profiles, the alternating timing, the tests.
Columns: item, before, after, ratio (after / before), verdict. The spread of a timing is how far
its fastest iteration (or round) sits below its median, (median - min) / median: the run's own
noise, which a single outlier does not inflate the way the coefficient of variation does. A change
is "within spread" when |ratio - 1| is at most the larger spread of the two runs (at least 1%); where there is no
spread (PyTorch's medians, speedups, ratios of two timings) a change over 5% is flagged.
--brief prints only the rows flagged or not run; --after-from-before reads every recorded file as
the new one too (a check of this script: every ratio 1.000). Exits 1 when a row reads SLOWER,
WORSE, WRONG, FAILED or CUT (run 1's record holds one CUT test, so the self-check exits 1 too).
"""
import argparse
import json
import math
import re
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "results"
OVERLAP_RS = RESULTS / "2026-11-23-overlap" / "h200-x2-run12"
OVERLAP_AR = RESULTS / "2026-11-23-overlap" / "h200-x2-run11"
TUNE = RESULTS / "2026-11-23-tune" / "h200-x2-run7"
SUITE = RESULTS / "2026-11-23-suite" / "h200-x2-run7"
CANDIDATES = RESULTS / "2026-11-23-suite" / "h200-x2-run6" / "candidates"
X2_RUN1 = RESULTS / "2026-11-24-x2-regression" / "h200-x2-run1"
TEST_FILTER = "*TwoRanks*:CandidateGpu.*:SuiteGpu.*:WatchdogGpu.*:AutomaticPlanGpu.*:TunerGpu.*"
FLAT = 0.05  # the change flagged where no spread is known
# The least spread allowed: two rounds give a poor estimate, and the same plan timed twice in one
# call (tuner run 7's A/A copy) reads up to ~1% apart.
FLOOR = 0.01

rows = []  # (item, before, after, ratio, verdict)
new_dirs = []
self_check = False


def after_path(name, before):
    """The new run's file `name`, or the recorded one itself under --after-from-before."""
    if self_check:
        return before
    found = [d / name for d in new_dirs if (d / name).exists()]
    return found[0] if found else new_dirs[0] / name


def load_json(path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def spread(stats):
    if isinstance(stats, dict) and stats.get("median") and stats.get("min") is not None:
        return (stats["median"] - stats["min"]) / stats["median"]
    return None


def median(stats):
    return stats.get("median") if isinstance(stats, dict) else stats


def fmt(value, kind):
    if value is None:
        return "—"
    if kind == "pt":
        return f"{100 * value:.2f}%"
    if kind == "count":
        return f"{value:d}"
    return f"{value:.3f}" if kind in ("speed", "abs") else f"{value:.1f}"


def verdict(before, after, kind, spreads=(), tol=None):
    """kind: time (lower is better), speed (higher is better), pt (an error fraction, lower is
    better, judged in percentage points), count (higher is better), abs (within +-tol)."""
    if after is None:
        return "not run"
    if before is None:
        return "no record"
    if kind == "pt":
        diff = 100 * (after - before)
        return "within 0.5 pt" if abs(diff) <= 0.5 else f"{'WORSE' if diff > 0 else 'better'} {diff:+.2f} pt"
    if kind == "count":
        # Tuner runs 6-8 moved the AR count 9 -> 9 -> 11 with the same binary.
        diff = after - before
        return "same" if diff == 0 else f"{'WORSE' if diff < -2 else 'within 2'} ({diff:+d})"
    if kind == "abs":
        diff = after - before
        return f"within ±{tol}" if abs(diff) <= tol else f"moved {diff:+.3f}"
    known = [s for s in spreads if s is not None]
    limit, name = (max(known + [FLOOR]), "spread") if known else (FLAT, "5% rule")
    ratio = after / before
    if abs(ratio - 1) <= limit:
        return f"within {name} ({limit:.1%})"
    worse = ratio > 1 if kind == "time" else ratio < 1
    word = ("SLOWER" if kind == "time" else "WORSE") if worse else ("faster" if kind == "time" else "better")
    return f"{word} {ratio - 1:+.1%} ({name} {limit:.1%})"


def add(item, before, after, kind="time", spreads=(), tol=None):
    ratio = f"{after / before:.3f}" if before and after is not None and kind not in ("pt", "count", "abs") else ""
    rows.append((item, fmt(before, kind), fmt(after, kind), ratio, verdict(before, after, kind, spreads, tol)))


def add_missing(item, before_file, after_file):
    """One row for a whole file missing on either side."""
    what = "not run" if not Path(after_file).exists() else "no record"
    rows.append((item, "recorded" if Path(before_file).exists() else "—",
                 "—" if what == "not run" else "present", "", f"{what} ({Path(after_file).name if what == 'not run' else before_file})"))


def geo_mean(values):
    values = [v for v in values if v]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def by_shape(doc):
    return {r["shape"]: r for r in doc.get("rows", [])} if doc else {}


def overlap(tag, before_file, after_name, metrics):
    """`kiln overlap bench --json` rows by shape: medians with their spread, the speedup, the check."""
    after_file = after_path(after_name, before_file)
    before, after = load_json(before_file), load_json(after_file)
    if before is None or after is None:
        return add_missing(f"{tag}: every shape", before_file, after_file)
    b_rows, a_rows = by_shape(before), by_shape(after)
    for shape in list(b_rows) + [s for s in a_rows if s not in b_rows]:
        b, a = b_rows.get(shape, {}), a_rows.get(shape, {})
        for label, key in metrics:
            if key == "speedup_vs_serial":
                add(f"{tag} {shape} {label}", b.get(key), a.get(key) if a else None, "speed")
            else:
                add(f"{tag} {shape} {label}", median(b.get(key)), median(a.get(key)) if a else None,
                    "time", (spread(b.get(key)), spread(a.get(key))))
        if a and not a.get("correct", True):
            rows.append((f"{tag} {shape} result", "correct", "WRONG", "", "WRONG RESULT"))
    add(f"{tag} geo-mean x serial", geo_mean(r.get("speedup_vs_serial") for r in b_rows.values()),
        geo_mean(r.get("speedup_vs_serial") for r in a_rows.values()), "speed")


def torch_side():
    before_file = OVERLAP_RS / "torch-async-tp-g2.json"
    after_file = after_path("torch-async-tp-g2.json", before_file)
    before, after = load_json(before_file), load_json(after_file)
    if before is None or after is None:
        return add_missing("PyTorch serial / async-TP: every shape", before_file, after_file)
    b_rows, a_rows = by_shape(before), by_shape(after)
    for shape, b in b_rows.items():
        a = a_rows.get(shape, {})
        add(f"PyTorch {shape} serial µs", b.get("serial_us"), a.get("serial_us"))
        add(f"PyTorch {shape} async-TP µs", b.get("async_tp_us"), a.get("async_tp_us"))
    # The issue quotes kiln against the faster of its own serial and PyTorch's, same call.
    kiln_b = by_shape(load_json(OVERLAP_RS / "rs-g2.json"))
    kiln_a = by_shape(load_json(after_path("rs-g2.json", OVERLAP_RS / "rs-g2.json")))

    def faster_serial(kiln, torch, shape):
        k, t = kiln.get(shape), torch.get(shape)
        if not k or not t or "serial_us" not in t:
            return None
        return min(median(k["serial_us"]), t["serial_us"]) / median(k["kiln_us"])
    for shape in b_rows:
        add(f"RS sweep {shape} kiln x faster serial", faster_serial(kiln_b, b_rows, shape),
            faster_serial(kiln_a, a_rows, shape), "speed")


def tune(op):
    v_before = TUNE / f"validate-{op}-g2.json"
    v_file = after_path(f"validate-{op}-g2.json", v_before)
    vb, va = load_json(v_before), load_json(v_file)
    if vb is None or va is None:
        add_missing(f"tune validate {op}", v_before, v_file)
    else:
        add(f"tune validate {op} mean abs error", vb["mean_abs_error"], va.get("mean_abs_error"), "pt")
        add(f"tune validate {op} p90 abs error", vb["p90_abs_error"], va.get("p90_abs_error"), "pt")
        add(f"tune validate {op} shapes within 1% of best", vb["shapes_within_1pct"],
            va.get("shapes_within_1pct"), "count")
    c_before = TUNE / f"compare-{op}-g2.json"
    c_file = after_path(f"compare-{op}-g2.json", c_before)
    cb, ca = load_json(c_before), load_json(c_file)
    if cb is None or ca is None:
        return add_missing(f"tune compare {op}", c_before, c_file)

    def plans(doc):
        return {r["shape"]: {p["name"]: p for p in r["plans"]} for r in doc["rows"]}
    pb, pa = plans(cb), plans(ca)
    for shape, b in pb.items():
        a = pa.get(shape, {}).get("tuned")
        t = b.get("tuned")

        def stat(p):
            return {"median": p["median_us"], "min": p["min_us"]} if p else None
        add(f"tune compare {op} {shape} tuned µs", t and t["median_us"], a and a["median_us"], "time",
            (spread(stat(t)), spread(stat(a))))
    # Geo-means over shapes of each strategy / tuned (> 1: tuned faster); the A/A copy reads
    # 1.0009-1.0027 in run 7 and single shapes +-1.5%, hence +-0.01.
    for name in ("equal", "per-wave", "reference", "tuned-again"):
        def ratio(p):
            r = [s[name]["median_us"] / s["tuned"]["median_us"] for s in p.values() if name in s and "tuned" in s]
            return geo_mean(r)
        add(f"tune compare {op} geo-mean {name} / tuned", ratio(pb), ratio(pa), "abs", tol=0.01)


def steady_speedup(row):
    """The speedup as records before 96291ef define it: the back-to-back reference's median over
    the solution's (later JSON has it as reference_steady_us; speedup divides judged by judged)."""
    if not row:
        return None
    if "reference_steady_us" not in row:
        return row.get("speedup")
    solution = median(row.get("solution_us"))
    steady = median(row.get("reference_steady_us"))
    return steady / solution if steady and solution else None


def suite():
    before_file = SUITE / "suite-g2-pkb.json"
    after_file = after_path("suite-g2-pkb.json", before_file)
    before, after = load_json(before_file), load_json(after_file)
    if before is None or after is None:
        return add_missing("suite pkb: every row", before_file, after_file)

    def keyed(doc):
        return {(r["problem"], r["size"], r["solution"]): r for r in doc["rows"]}
    kb, ka = keyed(before), keyed(after)
    for key in list(kb) + [k for k in ka if k not in kb]:
        b, a = kb.get(key, {}), ka.get(key)
        item = "suite " + " ".join(key)
        add(f"{item} µs", median(b.get("solution_us")), median(a.get("solution_us")) if a else None,
            "time", (spread(b.get("solution_us")), spread(a.get("solution_us") if a else None)))
        add(f"{item} speedup", b.get("speedup"), steady_speedup(a), "speed")
        if a and "reference_steady_us" in a:  # since 96291ef: the speedup over the judged reference
            add(f"{item} speedup (judged reference)", None, a.get("speedup"), "speed")
        if a and not a.get("correct", True):
            rows.append((f"{item} result", "correct", "WRONG", "", f"WRONG RESULT {a.get('failure', '')}"))
    for metric in ("fast_1", "fast_1.5", "fast_2", "roof_0.5"):
        add(f"suite metric {metric}", before["metrics"].get(metric), after.get("metrics", {}).get(metric),
            "speed")


def alternate_rows(path):
    """Per shape, each contender's per-round values: from the JSON, else from the round lines of a
    cut run's log (alternate.txt)."""
    doc = load_json(path)
    if doc:
        return {r["shape"]: r["rounds"] for r in doc["rows"]}
    log = Path(path).with_suffix(".txt")
    out = {}
    if log.exists():
        for line in log.read_text().splitlines():
            m = re.match(r"round \d+ (\S+): (.*)", line)
            if m:
                values = m.group(2).split()
                out.setdefault(m.group(1), []).append(
                    {values[i]: float(values[i + 1]) for i in range(0, len(values) - 1, 2)})
    return out


def alternate():
    before_file = X2_RUN1 / "alternate.json"
    after_file = after_path("alternate.json", before_file)
    rb, ra = alternate_rows(before_file), alternate_rows(after_file)
    if not rb or not ra:
        return add_missing("alternating kiln/PyTorch: every shape", before_file, after_file)
    # Runs before aa3e43a record no "inputs": kiln's side multiplied uniform values, PyTorch's
    # randn. A changed distribution moves a power-capped GEMM's time by itself.
    inputs_b = (load_json(before_file) or {}).get("inputs", "uniform/randn (kiln/PyTorch)")
    inputs_a = (load_json(after_file) or {}).get("inputs", "uniform/randn (kiln/PyTorch)")
    if inputs_b != inputs_a:
        rows.append(("alternating: operand values", inputs_b, inputs_a, "",
                     "CHANGED: kiln's GEMM times compare only within one distribution"))

    def med(rounds, key):
        values = [r[key] for r in rounds if key in r]
        return statistics.median(values) if values else None

    def rspread(rounds, key):
        values = [r[key] for r in rounds if key in r]
        return (statistics.median(values) - min(values)) / statistics.median(values) if len(values) > 1 else None
    labels = [("kiln serial", "serial"), ("PyTorch serial", "torch_serial"), ("kiln overlap", "kiln"),
              ("async-TP", "async_tp")]
    for shape, b in rb.items():
        a = ra.get(shape, [])
        for label, key in labels:
            add(f"alternating {shape} {label} µs", med(b, key), med(a, key), "time",
                (rspread(b, key), rspread(a, key)))

        def faster(rounds):
            s, t, k = med(rounds, "serial"), med(rounds, "torch_serial"), med(rounds, "kiln")
            return min(s, t) / k if s and t and k else None
        add(f"alternating {shape} kiln x faster serial", faster(b), faster(a), "speed")


def candidates():
    before_file = CANDIDATES / "summary.txt"
    after_file = after_path("candidates/summary.txt", before_file)

    def parse(path):
        out = {}
        if Path(path).exists():
            for line in Path(path).read_text().splitlines():
                m = re.match(r"(\S+) \(exit (\d+)\): ?(.*)", line)
                if m:
                    word = "accepted" if "accepted" in m.group(3) else "REJECTED" if "REJECTED" in m.group(3) else "refused"
                    out[m.group(1)] = f"exit {m.group(2)}, {word}"
        return out
    b, a = parse(before_file), parse(after_file)
    if not a:
        return add_missing("candidates (allgather, -g 2): every source", before_file, after_file)
    for name in list(b) + [n for n in a if n not in b]:
        after = a.get(name)
        if after is None:
            v = "not run"
        elif (name == "allgather_pull") != after.endswith("accepted"):
            v = "WRONG VERDICT (tests/candidates/README.md)"
        else:
            v = "as expected" + ("" if name in b and b[name] == after else " (changed)" if name in b else " (new)")
        rows.append((f"candidate {name}", b.get(name, "—"), after or "—", "", v))


def tests():
    def parse(paths):
        status, started = {}, set()
        for path in paths:
            if not Path(path).exists():
                continue
            for line in Path(path).read_text().splitlines():
                m = re.match(r"\[ +(RUN|OK|FAILED|SKIPPED) +\] (\S+)(?: \((\d+) ms\))?", line)
                if not m or "." not in m.group(2):
                    continue
                if m.group(1) == "RUN":
                    started.add(m.group(2))
                elif m.group(3) is not None or m.group(1) == "SKIPPED":
                    status[m.group(2)] = (m.group(1), int(m.group(3) or 0))
        for name in started - set(status):
            status[name] = ("CUT", 0)  # started, no verdict: the limit or a hang
        return status
    before_file = X2_RUN1 / "tests.txt"
    names = ["tests.txt", "tests-rest.txt", "tests-overlap.txt", "tests-candidates.txt"]
    b = parse([before_file])
    a = parse([before_file] if self_check else [d / n for d in new_dirs for n in names])
    expected = []
    binary = ROOT / "build" / "kiln_gpu_tests"
    if binary.exists():  # the filter's tests, listed without a GPU
        try:
            listing = subprocess.run([str(binary), "--gtest_list_tests", f"--gtest_filter={TEST_FILTER}"],
                                     capture_output=True, text=True, timeout=30).stdout
            suite_name = ""
            for line in listing.splitlines():
                if line and not line.startswith(" ") and line.endswith("."):
                    suite_name = line
                elif line.startswith("  ") and suite_name:
                    expected.append(suite_name + line.split()[0])
        except (OSError, subprocess.SubprocessError):
            pass
    for name in expected + sorted(n for n in set(a) | set(b) if n not in expected):
        sb, sa = b.get(name), a.get(name)
        show = lambda s: "—" if s is None else s[0] if s[0] in ("CUT", "SKIPPED") else f"{s[0]} ({s[1] / 1000:.1f} s)"
        if sa is None:
            v = "not run"
        else:
            v = {"OK": "ok", "FAILED": "FAILED", "SKIPPED": "SKIPPED (2 GPUs?)", "CUT": "CUT (no verdict)"}[sa[0]]
        ratio = f"{sa[1] / sb[1]:.2f}" if sa and sb and sa[1] and sb[1] else ""
        rows.append((f"test {name}", show(sb), show(sa), ratio, v))


def main():
    global new_dirs, self_check
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("new_dir", nargs="*", help="the unpacked x2/ folder(s) of scripts/device_x2_regression.sh")
    p.add_argument("--brief", action="store_true", help="only rows flagged or not run")
    p.add_argument("--after-from-before", action="store_true",
                   help="read the recorded files as the new ones (a self-check: ratios 1.000)")
    a = p.parse_args()
    new_dirs, self_check = [Path(d) for d in a.new_dir], a.after_from_before
    if not new_dirs and not self_check:
        p.error("give the new run's folder(s), or --after-from-before")
    for d in new_dirs:
        if not self_check and not d.is_dir():
            p.error(f"{d}: not a folder")
    sweep = [("serial µs", "serial_us"), ("cuBLAS GEMM µs", "cublas_gemm_us"),
             ("comm µs", "collective_us"), ("kiln µs", "kiln_us"), ("x serial", "speedup_vs_serial")]
    auto = [("kiln µs", "kiln_us"), ("x serial", "speedup_vs_serial")]
    overlap("RS sweep", OVERLAP_RS / "rs-g2.json", "rs-g2.json", sweep)
    overlap("AR sweep", OVERLAP_AR / "ar-g2.json", "ar-g2.json", sweep)
    torch_side()
    alternate()
    for op in ("rs", "ar"):
        tune(op)
    for op in ("rs", "ar"):
        # Tuner run 7's profiles are the built-in ones: the same plans, re-timed.
        overlap(f"auto {op.upper()} built-in vs tune run 7", TUNE / f"auto-{op}-g2.json",
                f"auto-builtin-{op}-g2.json", auto)
        overlap(f"auto {op.upper()} this call's profile vs tune run 7", TUNE / f"auto-{op}-g2.json",
                f"auto-{op}-g2.json", auto)
        overlap(f"auto {op.upper()} built-in vs x2 run 1", X2_RUN1 / f"{op}-g2.json",
                f"auto-builtin-{op}-g2.json", auto)
    suite()
    candidates()
    tests()

    flagged = [r for r in rows if not r[4].startswith(("within", "same", "ok", "as expected"))]
    print(f"# 2xH200 regression: {'recorded vs recorded (self-check)' if self_check else ', '.join(map(str, new_dirs))}\n")
    print("Before: overlap run 12 (RS, PyTorch), run 11 (AR); tuner run 7; suite run 7 (pkb), run 6 "
          "(candidates); issue 24 run 1 (auto built-in, alternating, tests). Ratio = after / before.\n")
    print("| item | before | after | ratio | verdict |\n|---|---|---|---|---|")
    for r in (flagged if a.brief else rows):
        print("| " + " | ".join(r) + " |")
    counts = {}
    for r in rows:
        word = r[4].split(" (")[0].split(" +")[0].split(" -")[0]
        counts[word] = counts.get(word, 0) + 1
    print(f"\n{len(rows)} rows: " + ", ".join(f"{n} {w}" for w, n in sorted(counts.items(), key=lambda x: -x[1])))
    return 1 if any(r[4].startswith(("SLOWER", "WORSE", "WRONG", "FAILED", "CUT")) for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
