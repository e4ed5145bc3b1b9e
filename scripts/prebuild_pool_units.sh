#!/usr/bin/env bash
# Compiles, into a build cache, the CUTLASS units of every CUTLASS genome in a strategy pool
# (issue 20's "CUTLASS instantiations may be prebuilt"): a search seeded from the pool
# (`kiln evolve set --pool`, scripts/device_full_set.sh's FULLSET_POOL) then finds its seeds'
# units built. scripts/prebuild_sm90_units.sh covers every sm90 configuration of the general
# matmuls (34 units); the sm80 (CUTLASS 2.x) configurations are too many for that (164 units for
# one operand layout with swizzles 1 and 8: the swizzle is a template parameter), and in the
# 2026-11-29d set run they were a quarter of the matmul evaluations and most of its compile-bound
# tail. Each genome is generated for its own problem (the unit carries the operand layouts);
# units of the same text are built once. No GPU needed (kiln compiles, then stops at the GPU
# check). Compile on the CPU machine, carry CACHE/units to a device call.
#   bash scripts/prebuild_pool_units.sh POOL CACHE
# JOBS: builds at once (default: every core). The building is scripts/prebuild_units.sh's.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
pool=${1:-}; cache=${2:-}
[ -n "$pool" ] && [ -n "$cache" ] || { echo "usage: $0 POOL CACHE" >&2; exit 2; }
[ -f "$pool" ] || { echo "$0: $pool: no such pool" >&2; exit 2; }
[ -x build/kiln ] || { echo "$0: build/kiln missing (build first)" >&2; exit 2; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# problem <tab> genome JSON, for every genome with a CUTLASS strategy.
python3 - "$pool" > "$work/genomes" << 'PY'
import json, sys
seen = set()
for e in json.load(open(sys.argv[1]))["entries"]:
    g = e["genome"]
    if not any(s in ("cutlass-sm80-mma", "cutlass-sm90") for s in g["strategies"]):
        continue
    key = (e["problem"], json.dumps({k: g[k] for k in ("family", "strategies", "knobs")}, sort_keys=True))
    if key not in seen:
        seen.add(key)
        print(key[0] + "\t" + key[1])
PY
bash scripts/prebuild_units.sh "$work/genomes" "$cache"
