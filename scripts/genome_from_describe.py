#!/usr/bin/env python3
"""Genome JSON (as `kiln evolve generate --genome` takes it) from a genome's description, the
form kiln writes in a candidate's header and in a set's genome list:
    matmul: cutlass-sm90(tile_m=128,tile_n=256,split_k=2) + tf32x3
Reads lines `<problem> // Genome <hash>: <description>` (a set's genome list) on stdin or from
FILE and prints `<problem> <name> <json>` lines for scripts/device_probe_genomes.sh; --set KNOB=V
(strategy.knob=value, repeatable) overrides knobs of genomes that have the strategy, --only
PROBLEM (repeatable) keeps those problems, --family F keeps genomes of that family."""
import argparse
import json
import re
import sys


def parse(description):
    family, _, rest = description.partition(":")
    strategies, knobs = [], {}
    for part in rest.split(" + "):
        part = part.strip()
        m = re.fullmatch(r"([\w-]+)(?:\((.*)\))?", part)
        if not m:
            raise ValueError(f"cannot read strategy {part!r} in {description!r}")
        name, args = m.group(1), m.group(2)
        strategies.append(name)
        for kv in filter(None, (args or "").split(",")):
            key, _, value = kv.partition("=")
            knobs[f"{name}.{key.strip()}"] = int(value)
    return {"family": family.strip(), "strategies": sorted(strategies), "knobs": knobs}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", nargs="?", help="genome list (default: stdin)")
    ap.add_argument("--name", default="regen", help="the probe name written (default regen)")
    ap.add_argument("--set", action="append", default=[], metavar="STRATEGY.KNOB=VALUE")
    ap.add_argument("--only", action="append", default=[], metavar="PROBLEM")
    ap.add_argument("--family", help="keep genomes of this family only")
    args = ap.parse_args()
    overrides = {}
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep or "." not in key:
            ap.error(f"--set {item!r}: expected STRATEGY.KNOB=VALUE")
        overrides[key] = int(value)
    lines = open(args.file) if args.file else sys.stdin
    for line in lines:
        m = re.match(r"(\S+) // Genome [0-9a-f]+: (.*)$", line.strip())
        if not m:
            continue
        problem, genome = m.group(1), parse(m.group(2))
        if args.only and problem not in args.only:
            continue
        if args.family and genome["family"] != args.family:
            continue
        for key, value in overrides.items():
            if key.split(".")[0] in genome["strategies"]:
                genome["knobs"][key] = value
        print(problem, args.name, json.dumps(genome, separators=(",", ":")))


if __name__ == "__main__":
    main()
