"""The path of a `kiln evolve run`: when the best kernel improved and which strategies entered
(issue 20's ladder test), as a Markdown table and an SVG plot of the best U against evaluations.

    python3 scripts/evolve_path.py LOG.json [--label NAME] [--bar U --bar-label CUB] \
        [--other LOG2.json --other-label random] [--svg OUT.svg]
LOG.json is a run's log (`kiln evolve run --out DIR` writes DIR/log.json). --bar draws a
horizontal line (e.g. CUB's U judged the same way); --other adds a second run's best-so-far curve.
"""
import argparse
import json
import sys


def fitness(entry):
    e = entry["evaluation"]
    return e["roof_us"] / e["us"] if e.get("correct") and e.get("us", 0) > 0 else 0.0


def best_so_far(log):
    best, curve = 0.0, []
    for entry in log:
        best = max(best, fitness(entry))
        curve.append(best)
    return curve


def describe(genome):
    knobs = genome.get("knobs", {})
    parts = []
    for s in sorted(genome["strategies"]):
        k = [f"{n.split('.', 1)[1]}={v}" for n, v in sorted(knobs.items()) if n.startswith(s + ".")]
        parts.append(s + (f"({','.join(k)})" if k else ""))
    return " + ".join(parts)


def path_table(log, bar):
    rows = ["| evaluation | U | µs | origin | entered | left | genome |", "|---|---|---|---|---|---|---|"]
    best, previous = 0.0, set()
    crossed = None
    for i, entry in enumerate(log, 1):
        u = fitness(entry)
        if u <= best:
            continue
        best = u
        strategies = set(entry["genome"]["strategies"])
        entered = ", ".join(sorted(strategies - previous)) or "(knobs)"
        left = ", ".join(sorted(previous - strategies)) or ""
        previous = strategies
        rows.append(f"| {i} | {u:.3f} | {entry['evaluation']['us']:.1f} | {entry.get('origin', '')} | "
                    f"{entered} | {left} | {describe(entry['genome'])} |")
        if bar is not None and crossed is None and u >= bar:
            crossed = i
    return rows, crossed


def svg(curves, bar, bar_label, title):
    w, h, left, bottom, top, right = 640, 360, 56, 40, 30, 120
    n = max(len(c) for _, c in curves)
    x = lambda i: left + (w - left - right) * i / max(n - 1, 1)
    y = lambda u: top + (h - top - bottom) * (1.0 - u)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">',
           f'<text x="{left}" y="18" font-size="13">{title}</text>']
    for u in (0.0, 0.25, 0.5, 0.75, 1.0):
        out.append(f'<line x1="{left}" y1="{y(u):.1f}" x2="{w - right}" y2="{y(u):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{y(u) + 4:.1f}" text-anchor="end">{u:.2f}</text>')
    for i in range(0, n + 1, max(1, n // 8)):
        out.append(f'<text x="{x(min(i, n - 1)):.1f}" y="{h - bottom + 16}" text-anchor="middle">{i}</text>')
    out.append(f'<text x="{(left + w - right) / 2}" y="{h - 6}" text-anchor="middle">evaluations</text>')
    out.append(f'<text x="14" y="{(top + h - bottom) / 2}" transform="rotate(-90 14 {(top + h - bottom) / 2})" text-anchor="middle">best U so far</text>')
    if bar is not None:
        out.append(f'<line x1="{left}" y1="{y(bar):.1f}" x2="{w - right}" y2="{y(bar):.1f}" stroke="#c00" stroke-dasharray="5,4"/>')
        out.append(f'<text x="{w - right + 4}" y="{y(bar) + 4:.1f}" fill="#c00">{bar_label} {bar:.3f}</text>')
    colours = ["#1f5fbf", "#2a9d3a", "#8a4fbf"]
    for k, (label, curve) in enumerate(curves):
        pts = " ".join(f"{x(i):.1f},{y(u):.1f}" for i, u in enumerate(curve))
        out.append(f'<polyline fill="none" stroke="{colours[k % 3]}" stroke-width="2" points="{pts}"/>')
        out.append(f'<text x="{w - right + 4}" y="{y(curve[-1]) - 6 - 12 * k:.1f}" fill="{colours[k % 3]}">{label} {curve[-1]:.3f}</text>')
    out.append("</svg>")
    return "\n".join(out)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("log")
    p.add_argument("--label", default="guided")
    p.add_argument("--bar", type=float)
    p.add_argument("--bar-label", default="CUB")
    p.add_argument("--other")
    p.add_argument("--other-label", default="random")
    p.add_argument("--title", default="kiln evolve: best U against evaluations")
    p.add_argument("--svg")
    a = p.parse_args()
    if a.bar is not None and not 0 < a.bar <= 1.5:
        p.error("--bar must be a U in (0, 1.5]")
    log = json.load(open(a.log))
    if not isinstance(log, list) or not log:
        p.error(f"{a.log}: not a run's log (a non-empty JSON array)")
    rows, crossed = path_table(log, a.bar)
    print("\n".join(rows))
    if a.bar is not None:
        print(f"\nfirst at or above {a.bar_label} (U {a.bar:.3f}): evaluation {crossed} of {len(log)}")
    curves = [(a.label, best_so_far(log))]
    if a.other:
        curves.append((a.other_label, best_so_far(json.load(open(a.other)))))
    if a.svg:
        with open(a.svg, "w") as f:
            f.write(svg(curves, a.bar, a.bar_label, a.title))
    return 0


if __name__ == "__main__":
    sys.exit(main())
