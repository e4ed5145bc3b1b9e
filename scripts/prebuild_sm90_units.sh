#!/usr/bin/env bash
# Compiles the CUTLASS sm90 GEMM units of the matmul generator's configurations into a build cache
# ahead of a search (issue 20's "CUTLASS instantiations may be prebuilt"): a candidate's unit is
# keyed by its code and compile flags (src/bench/candidate_library.cpp), and the knobs that change
# it are tile_m, tile_n, cluster_m, schedule, promote and copies (raster, swizzle and split_k are
# run-time arguments), so one object per combination serves every problem and run. Compiling one takes
# 40-120 s of one core; a set run that meets a new configuration waits for it.
#   bash scripts/prebuild_sm90_units.sh CACHE [PROMOTES] [COPIES]
# CACHE: a build cache folder (`kiln evolve set` uses OUT/build-cache; copy CACHE/units/ there, or
# name it as CACHE). PROMOTES: the promote values to build (default "0 4"; the catalog has
# 0 16 4 8 32, but promote's value is a run-time argument and only promote > 0 changes the unit,
# so "0 4" builds every unit: 34 objects, 3.6 MB, 26 min on 2 cores, 2026-11-29). COPIES: the
# copies values (default "3 2": twice as many units; "3" builds only the three-copy ones). Runs on every core (JOBS to change), with no GPU (kiln compiles, then stops at the
# GPU check); configurations CUTLASS refuses are listed and skipped. An object holds for the same
# nvcc release, candidate headers (their contents) and CUTLASS version, wherever they are installed
# (bench/candidate_library.cpp, unit_toolchain): compile on the CPU machine, carry CACHE to a
# device call (scripts/device_full_set.sh takes prebuilt-units/).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cache=${1:-}; promotes=${2:-"0 4"}; copies_values=${3:-"3 2"}
[ -n "$cache" ] || { echo "usage: $0 CACHE [PROMOTES]" >&2; exit 2; }
[ -x build/kiln ] || { echo "$0: build/kiln missing (build first)" >&2; exit 2; }
mkdir -p "$cache" && cache=$(cd "$cache" && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
jobs=${JOBS:-$(nproc)}
for tm in 128 64 256; do for tn in 256 64 128; do for cm in 2 1; do for sch in 0 1; do
  for pr in $promotes; do for cp in $copies_values; do
    echo "$tm $tn $cm $sch $pr $cp"
  done; done
done; done; done; done > "$work/configs"
echo "# $(wc -l < "$work/configs") configurations, $jobs at a time, into $cache/units"
build_one() {
  read -r tm tn cm sch pr cp <<< "$1"
  name="sm90-${tm}x${tn}-c${cm}-s${sch}-p${pr}-x${cp}"
  genome="{\"family\":\"matmul\",\"strategies\":[\"cutlass-sm90\",\"tf32x3\"],\"knobs\":{\"cutlass-sm90.tile_m\":$tm,\"cutlass-sm90.tile_n\":$tn,\"cutlass-sm90.cluster_m\":$cm,\"cutlass-sm90.schedule\":$sch,\"cutlass-sm90.promote\":$pr,\"cutlass-sm90.copies\":$cp}}"
  if ! build/kiln evolve generate --problem kb1-1-square-matmul --genome "$genome" \
      --out "$WORK/$name.cu" > /dev/null 2>&1; then
    echo "$name: not generated (the catalog refuses it)"; return
  fi
  start=$(date +%s)
  CUDA_VISIBLE_DEVICES="" build/kiln bench candidate --problem kb1-1-square-matmul --sizes small \
    --source "$WORK/$name.cu" --build-dir "$WORK/build" --build-cache "$CACHE" --reuse-builds \
    --compile-timeout 900 > "$WORK/$name.log" 2>&1
  if grep -q "no CUDA GPU" "$WORK/$name.log"; then
    echo "$name: built in $(( $(date +%s) - start )) s"
  else
    echo "$name: FAILED: $(grep -m1 -E 'error' "$WORK/$name.log" | cut -c1-160)"
  fi
}
export -f build_one
export WORK="$work" CACHE="$cache"
xargs -P "$jobs" -I{} bash -c 'build_one "$@"' _ {} < "$work/configs"
echo "# $(ls "$cache/units"/*.o 2>/dev/null | wc -l) unit objects in $cache/units"
