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
# JOBS: builds at once (default: every core).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
pool=${1:-}; cache=${2:-}
[ -n "$pool" ] && [ -n "$cache" ] || { echo "usage: $0 POOL CACHE" >&2; exit 2; }
[ -f "$pool" ] || { echo "$0: $pool: no such pool" >&2; exit 2; }
[ -x build/kiln ] || { echo "$0: build/kiln missing (build first)" >&2; exit 2; }
mkdir -p "$cache" && cache=$(cd "$cache" && pwd)
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
# One source per distinct unit text.
n=0
while IFS=$'\t' read -r problem genome; do
  n=$((n + 1))
  src="$work/g$n.cu"
  if ! build/kiln evolve generate --problem "$problem" --genome "$genome" --out "$src" > /dev/null 2>&1; then
    echo "$problem: not generated: $genome"; continue
  fi
  unit=$(sed -n '/kiln-unit: begin/,/kiln-unit: end/p' "$src" | md5sum | cut -c1-16)
  if [ -e "$work/unit-$unit" ]; then rm -f "$src"; continue; fi
  echo "$problem" > "$work/unit-$unit"
  echo "$src $problem" >> "$work/sources"
done < "$work/genomes"
echo "# $(wc -l < "$work/genomes") CUTLASS genomes in $pool, $(wc -l < "$work/sources") distinct units; $(ls "$cache/units" 2> /dev/null | grep -c '\.o$') objects in $cache/units before"
build_one() {
  read -r src problem <<< "$1"
  start=$(date +%s)
  CUDA_VISIBLE_DEVICES="" build/kiln bench candidate --problem "$problem" --sizes small \
    --source "$src" --build-dir "$WORK/build-$(basename "$src" .cu)" --build-cache "$CACHE" \
    --reuse-builds --compile-timeout 900 > "$src.log" 2>&1
  if grep -q "no CUDA GPU" "$src.log"; then
    echo "$problem $(basename "$src"): built in $(( $(date +%s) - start )) s"
  else
    echo "$problem $(basename "$src"): FAILED: $(grep -m1 -E 'error' "$src.log" | cut -c1-160)"
  fi
}
export -f build_one
export WORK="$work" CACHE="$cache"
xargs -P "${JOBS:-$(nproc)}" -I{} bash -c 'build_one "$@"' _ {} < "$work/sources"
echo "# $(ls "$cache/units"/*.o 2> /dev/null | wc -l) unit objects in $cache/units"
