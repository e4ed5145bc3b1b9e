#!/usr/bin/env bash
# Compiles, into a build cache, the CUTLASS units of every CUTLASS genome a set run evaluated (the
# log.json of each problem folder under SET, e.g. a device_full_set.sh state's fullset-state/set):
# a later run, which starts from that run's pool and explores around it, then finds most of its
# units built. In the 2026-11-29e run the units no prebuild covered (transposed operands, SDPA's two
# GEMMs) made the last calls compile-bound (compile 513 of call 3's 616 search-seconds, the GPU
# idle). The building is scripts/prebuild_units.sh's; no GPU needed. Carry CACHE/units.
#   bash scripts/prebuild_log_units.sh SET CACHE
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
set_dir=${1:-}; cache=${2:-}
if [ -z "$set_dir" ] || [ -z "$cache" ]; then echo "usage: $0 SET CACHE" >&2; exit 2; fi
[ -d "$set_dir" ] || { echo "$0: $set_dir: no such folder" >&2; exit 2; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# problem <tab> genome JSON, once each, for every logged genome with a CUTLASS strategy.
python3 - "$set_dir" > "$work/genomes" << 'PY'
import glob, json, os, sys
seen = set()
for log in sorted(glob.glob(os.path.join(sys.argv[1], "*", "log.json"))):
    problem = os.path.basename(os.path.dirname(log))
    for entry in json.load(open(log)):
        g = entry["genome"]
        if not any(s in ("cutlass-sm80-mma", "cutlass-sm90") for s in g["strategies"]):
            continue
        key = (problem, json.dumps({k: g[k] for k in ("family", "strategies", "knobs")}, sort_keys=True))
        if key not in seen:
            seen.add(key)
            print(key[0] + "\t" + key[1])
PY
echo "$(wc -l < "$work/genomes") CUTLASS genomes logged under $set_dir"
bash scripts/prebuild_units.sh "$work/genomes" "$cache"
