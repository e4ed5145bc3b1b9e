#!/usr/bin/env bash
# Compiles the CUTLASS units of a list of genomes into a build cache (issue 20's "CUTLASS
# instantiations may be prebuilt"): GENOMES holds lines "problem<TAB>genome JSON" (as in a run's
# log.json). Each genome is generated for its own problem (the unit carries the operand layouts);
# units of the same text are built once, in the list's order; units already in CACHE are reused
# (kiln's build cache). No GPU needed (kiln compiles, then stops at the GPU check). Used by
# scripts/prebuild_pool_units.sh and scripts/prebuild_sm80_units.sh.
#   bash scripts/prebuild_units.sh GENOMES CACHE
# JOBS: builds at once (default: every core).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
genomes=${1:-}; cache=${2:-}
[ -n "$genomes" ] && [ -n "$cache" ] || { echo "usage: $0 GENOMES CACHE" >&2; exit 2; }
[ -f "$genomes" ] || { echo "$0: $genomes: no such file" >&2; exit 2; }
[ -x build/kiln ] || { echo "$0: build/kiln missing (build first)" >&2; exit 2; }
mkdir -p "$cache" && cache=$(cd "$cache" && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cp "$genomes" "$work/genomes"
touch "$work/sources"
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
echo "# $(wc -l < "$work/genomes") genomes in $genomes, $(wc -l < "$work/sources") distinct units; $(find "$cache/units" -name '*.o' 2> /dev/null | wc -l) objects in $cache/units before"
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
