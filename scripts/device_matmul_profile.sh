#!/usr/bin/env bash
# Device call for the matmul family's sm90 path (issue 20): configurations of the generated
# 3xTF32 candidates judged side by side (guarded timing) on PROBLEMS at SIZE, and Nsight Compute's
# per-kernel durations (split kernels, the GEMM, the slice sum) for the first NCU configurations,
# so that the time is placed between the operand split and the GEMM.
#   PROBLEMS (kb1-1-square-matmul), SIZE (kb), CONFIGS (names of the genomes below), NCU (names)
# Sources and libraries live in evolve-set/matmul-profile/ (git-ignored, carried): run
#   bash scripts/device_matmul_profile.sh prepare     here first (no GPU: compiles, 2 at a time;
#   the judge on the device finds each library built from the same source by the same command),
#   bash scripts/device_matmul_profile.sh             on the device (carry ["carry", "evolve-set"]).
# Needs: bash scripts/pack_carry.sh build/kiln build/kiln_gpu_tests .deps/cutlass-4.2.0.0/include
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
prepare=${1:-}
if [ "$prepare" != prepare ]; then
  bash scripts/unpack_carry.sh > /dev/null
  source scripts/device_env.sh > /dev/null 2>&1
fi
w=$PWD/evolve-set/matmul-profile; mkdir -p "$w/src" "$w/build"
o=${OUT:-out}/matmul-profile; mkdir -p "$o"
PROBLEMS=${PROBLEMS:-kb1-1-square-matmul}; SIZE=${SIZE:-kb}; NCU=${NCU:-coop128 coop256x128-p0}
sm90() { echo "{\"family\":\"matmul\",\"strategies\":[\"cutlass-sm90\",\"tf32x3\"],\"knobs\":{$1}}"; }
# exploit-structure (the triangular products kb1-14, kb1-15): block and slice knobs.
tri() { echo "{\"family\":\"matmul\",\"strategies\":[\"cutlass-sm90\",\"tf32x3\",\"exploit-structure\"],\"knobs\":{$1}}"; }
declare -A genome=(
  [coop128]="$(sm90 '"cutlass-sm90.tile_m":128,"cutlass-sm90.tile_n":128')"
  [coop128-p32]="$(sm90 '"cutlass-sm90.tile_m":128,"cutlass-sm90.tile_n":128,"cutlass-sm90.promote":32')"
  [coop128-p4]="$(sm90 '"cutlass-sm90.tile_m":128,"cutlass-sm90.tile_n":128,"cutlass-sm90.promote":4')"
  [coop128x64]="$(sm90 '"cutlass-sm90.tile_m":128,"cutlass-sm90.tile_n":64')"
  [pp64x128]="$(sm90 '"cutlass-sm90.schedule":1,"cutlass-sm90.tile_m":64,"cutlass-sm90.tile_n":128')"
  [coop128-c2]="$(sm90 '"cutlass-sm90.tile_m":128,"cutlass-sm90.tile_n":128,"cutlass-sm90.cluster_m":2,"cutlass-sm90.raster_n":1,"cutlass-sm90.swizzle":4')"
  [coop128-s4]="$(sm90 '"cutlass-sm90.tile_m":128,"cutlass-sm90.tile_n":128,"cutlass-sm90.split_k":4')"
  [coop256x128-p0]="$(sm90 '"cutlass-sm90.tile_m":256,"cutlass-sm90.tile_n":128,"cutlass-sm90.promote":0')"
  [coop128x256-p0-c2]="$(sm90 '"cutlass-sm90.tile_m":128,"cutlass-sm90.tile_n":256,"cutlass-sm90.promote":0,"cutlass-sm90.cluster_m":2')"
  [tri256]="$(tri '')"
  [tri256-s8]="$(tri '"exploit-structure.slice_blocks":8')"
  [tri256-s16]="$(tri '"exploit-structure.slice_blocks":16')"
  [tri512-s4]="$(tri '"exploit-structure.block":512')"
  [tri512-s8]="$(tri '"exploit-structure.block":512,"exploit-structure.slice_blocks":8')"
  [tri256-c1]="$(tri '"cutlass-sm90.cluster_m":1')"
  [tri256-256x128]="$(tri '"cutlass-sm90.tile_m":256,"cutlass-sm90.tile_n":128')"
  [sm80]='{"family":"matmul","strategies":["cutlass-sm80-mma","tf32x3"],"knobs":{"cutlass-sm80-mma.tile_m":128,"cutlass-sm80-mma.tile_n":64,"cutlass-sm80-mma.tile_k":32,"cutlass-sm80-mma.warp":32,"cutlass-sm80-mma.stages":3,"cutlass-sm80-mma.swizzle":4,"cutlass-sm80-mma.split_k":2}}'
)
names=${CONFIGS:-"coop128 coop128-p32 coop128-p4 coop128x64 pp64x128 coop128-c2 coop128-s4 coop256x128-p0 coop128x256-p0-c2 sm80"}
if [ "$prepare" = prepare ]; then
  for p in $PROBLEMS; do
    for n in $names; do
      build/kiln evolve generate --problem "$p" --genome "${genome[$n]}" --out "$w/src/$p-$n.cu" > /dev/null &&
        echo "$p $w/src/$p-$n.cu"
    done
  done | xargs -P 2 -L 1 sh -c 'build/kiln bench candidate --reuse-builds --problem "$0" --source "$1" --build-dir "'"$w/build"'" 2>&1 | grep -E "error: --source" | cut -c1-300'
  ls "$w/build"/*.so | wc -l
  exit 0
fi
echo "device_matmul_profile on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) at $(date -u +%FT%TZ), kiln $(git rev-parse --short HEAD 2>/dev/null)" | tee "$o/summary.txt"
for p in $PROBLEMS; do
  sources=()
  for n in $names; do
    [ -f "$w/src/$p-$n.cu" ] || build/kiln evolve generate --problem "$p" --genome "${genome[$n]}" \
      --out "$w/src/$p-$n.cu" > /dev/null || continue
    sources+=(--source "$w/src/$p-$n.cu")
  done
  timeout 300 build/kiln bench candidate --reuse-builds --problem "$p" --sizes "$SIZE" "${sources[@]}" --json-per-source \
    --build-dir "$w/build" -w 3 -n 10 --trials 2 --timeout 60 > "$o/$p-judge.txt" 2>&1
  echo "$p judge exit $?" | tee -a "$o/summary.txt"
  for n in $names; do
    j="$w/src/$p-$n.json"
    [ -f "$j" ] && cp "$j" "$o/"
    [ -f "$j" ] && python3 scripts/verdict_rows.py "$j" "$n" | tee -a "$o/summary.txt"
  done
  for n in $NCU; do
    [ -f "$w/src/$p-$n.cu" ] || continue
    timeout 200 ncu --clock-control none --metrics gpu__time_duration.sum \
      -k 'regex:split_|sum_slices|add_slices|zero_off|copy_corner|device_kernel|Kernel' -c 30 \
      build/kiln bench candidate --reuse-builds --problem "$p" --sizes "$SIZE" --source "$w/src/$p-$n.cu" \
      --build-dir "$w/build" -w 1 -n 2 --trials 1 --timing screen --skip-reference-timing \
      > "$o/$p-$n-ncu.txt" 2>&1
    echo "$p $n ncu exit $?" | tee -a "$o/summary.txt"
    grep -E "^  [a-zA-Z_].*\(|gpu__time_duration" "$o/$p-$n-ncu.txt" | sed 's/(.\{200,\}/(...)/' | paste - - |
      awk '{print}' | sort | uniq -c | head -20 | tee -a "$o/summary.txt"
  done
done
