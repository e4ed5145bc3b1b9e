#!/usr/bin/env bash
# Compiles, into a build cache, the CUTLASS units of every CUTLASS genome in a strategy pool, or
# of every one a set run logged (issue 20's "CUTLASS instantiations may be prebuilt"): a search
# seeded from the pool (`kiln evolve set --pool`, scripts/device_full_set.sh's FULLSET_POOL), or
# a later run exploring around an earlier one, then finds its units built.
# scripts/prebuild_sm90_units.sh covers every sm90 configuration of the general matmuls (34
# units), scripts/prebuild_sm80_units.sh every sm80 one of a layout (328). In the 2026-11-29d set
# run the sm80 units were a quarter of the matmul evaluations and most of its compile-bound tail;
# in 2026-11-29e the units no prebuild covered (transposed operands, SDPA's GEMMs) made the last
# calls compile-bound. Each genome is generated for its own problem (the unit carries the operand
# layouts); units of the same text are built once. No GPU needed (kiln compiles, then stops at
# the GPU check). Compile on the CPU machine, carry CACHE/units to a device call.
#   bash scripts/prebuild_pool_units.sh POOL CACHE   (a pool's JSON file)
#   bash scripts/prebuild_pool_units.sh SET CACHE    (a set run's folder, e.g. fullset-state/set:
#                                                     each problem folder's log.json)
# JOBS: builds at once (default: every core). The building is scripts/prebuild_units.sh's.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
from=${1:-}; cache=${2:-}
[ -n "$from" ] && [ -n "$cache" ] || { echo "usage: $0 POOL|SET CACHE" >&2; exit 2; }
[ -e "$from" ] || { echo "$0: $from: no such pool file or set folder" >&2; exit 2; }
[ -x build/kiln ] || { echo "$0: build/kiln missing (build first)" >&2; exit 2; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# problem <tab> genome JSON, once each, for every genome with a CUTLASS strategy.
python3 - "$from" > "$work/genomes" << 'PY'
import glob, json, os, sys
seen = set()
if os.path.isdir(sys.argv[1]):
    entries = [(os.path.basename(os.path.dirname(log)), e["genome"])
               for log in sorted(glob.glob(os.path.join(sys.argv[1], "*", "log.json")))
               for e in json.load(open(log))]
else:
    entries = [(e["problem"], e["genome"]) for e in json.load(open(sys.argv[1]))["entries"]]
for problem, g in entries:
    if not any(s in ("cutlass-sm80-mma", "cutlass-sm90") for s in g["strategies"]):
        continue
    key = (problem, json.dumps({k: g[k] for k in ("family", "strategies", "knobs")}, sort_keys=True))
    if key not in seen:
        seen.add(key)
        print(key[0] + "\t" + key[1])
PY
bash scripts/prebuild_units.sh "$work/genomes" "$cache"
