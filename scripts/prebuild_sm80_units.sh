#!/usr/bin/env bash
# Compiles every CUTLASS 2.x (cutlass-sm80-mma) unit of the matmul generator for the operand
# layouts of PROBLEMS into a build cache. Tile, warp tile, stages and swizzle change the unit
# (split-K is a run-time argument): 328 unit texts for one layout, ~20 s each on one core of the
# CPU machine (2026-11-29). In the 2026-11-29d set run the sm80 candidates were a quarter of the
# matmul evaluations (76 configurations), built during the search.
#   bash scripts/prebuild_sm80_units.sh CACHE [PROBLEMS]
# PROBLEMS: default kb1-1-square-matmul (A and B row-major, aligned: the layouts of kb1-1..3,
# 6, 7, 9-11 and 13); kb1-16/17/18 have the transposed layouts, kb1-8 the unaligned one.
# JOBS: builds at once (default: every core). The building is scripts/prebuild_units.sh's.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
cache=${1:-}; problems=${2:-kb1-1-square-matmul}
[ -n "$cache" ] || { echo "usage: $0 CACHE [PROBLEMS]" >&2; exit 2; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
for p in $problems; do
  for sw in 8 1 2 4; do for tm in 128 64 256; do for tn in 128 64 256; do for tk in 16 32; do
    for w in 64 32; do for st in 3 4 5; do
      printf '%s\t{"family":"matmul","strategies":["cutlass-sm80-mma","tf32x3"],"knobs":{"cutlass-sm80-mma.tile_m":%s,"cutlass-sm80-mma.tile_n":%s,"cutlass-sm80-mma.tile_k":%s,"cutlass-sm80-mma.warp":%s,"cutlass-sm80-mma.stages":%s,"cutlass-sm80-mma.swizzle":%s,"cutlass-sm80-mma.split_k":1}}\n' \
        "$p" "$tm" "$tn" "$tk" "$w" "$st" "$sw"
    done; done
  done; done; done; done
done > "$work/genomes"
bash scripts/prebuild_units.sh "$work/genomes" "$cache"
