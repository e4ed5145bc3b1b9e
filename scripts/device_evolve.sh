#!/usr/bin/env bash
# Device run for issue 20 (kiln evolve) on one GPU. Steps:
#   tests   the generate -> compile -> judge path of every generated family (EvolveGpu.*)
#   suite   reduce-sum-int32's library solutions (cub, kiln-vec) at 1e8 and 1e9 (the ladder's bar)
#   ladder  `kiln evolve run --problem reduce-sum-int32 --seed-naive` at each of LADDER_SIZES
#           (default 1e8) with LADDER_BUDGET evaluations (default 200): the study's naive kernel
#           as the only seed
#   random  the same budget as plain random search (the search-quality baseline), RANDOM_SIZES
#   sanitizer  compute-sanitizer memcheck and racecheck on generated whole-sum kernels at 1e6: the
#           ladder's v3a (unrolled last warp) and vec (last-block completion), written by
#           EvolveGpu.WholeSum*, and run 5's evolved best (docs/results/2026-11-24-evolve/)
#   cub     CUB (tests/candidates/reduce_sum_cub.cu) and each ladder run's best.cu judged again,
#           alternating, by the same candidate path and settings (CUB_SIZES, default 1e8 1e9)
# Writes /tmp/kiln-evolve/e-HHMMSS/ and packs it as $OUT/evolve-HHMMSS.tar.gz (summary.txt beside it).
#   speed   the engine's evaluations per second, each generation judged in one launch (the
#           default) against every genome judged alone (--judge-alone), same seed and budget,
#           on SPEED_PROBLEMS (problem:size, default kb1-19-relu:small reduce-sum-int32:1e8)
#   compare search quality: guided (crossover + roofline guidance, an empty pool) against --random
#           over the same genomes, COMPARE_SEEDS (default 1 2 3) x COMPARE_PROBLEMS (problem:size),
#           budget COMPARE_BUDGET (default 48); best U per run and the median per mode
# Usage: bash scripts/device_evolve.sh [tests] [suite] [ladder] [random] [sanitizer] [cub] [speed] [compare]
#        env LADDER_SIZES, LADDER_BUDGET, LADDER_SEED, RANDOM_SIZES, EVOLVE_LIMIT (s per run),
#        RESUME_FROM (a folder holding ladder-<size>/ of an earlier call, cut off by EVOLVE_LIMIT:
#        the run goes on from its log with --resume)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/device_env.sh >/dev/null
steps=${*:-tests suite ladder}
# One folder and archive per invocation: a second invocation in the same device call must not
# overwrite the first's (it did in docs/results/2026-11-24-evolve/ run 5).
stamp=$(date -u +%H%M%S)
out=/tmp/kiln-evolve/e-$stamp; rm -rf "$out"; mkdir -p "$out"
archive=evolve-$stamp
source scripts/device_steps.sh
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader)"
budget=${LADDER_BUDGET:-200}
judge=(-w 3 -n 10 --trials 2 --timeout 30)

if step tests; then
  timed 400 tests-evolve.txt build/kiln_gpu_tests --gtest_filter="${EVOLVE_TESTS:-EvolveGpu.*}"
  grep -E "^\[  (PASSED|FAILED) |^\[       OK|^\[  FAILED|reduce-sum|kb1-" "$out/tests-evolve.txt" | tee -a "$out/summary.txt"
fi

if step suite; then
  timed 300 suite-reduce-sum.txt build/kiln bench suite -g 1 --problems reduce-sum-int32 \
    --sizes 1e8 1e9 --json "$out/suite-reduce-sum.json"
  cat "$out/suite-reduce-sum.txt" >> "$out/summary.txt"
fi

if step ladder; then
  for size in ${LADDER_SIZES:-1e8}; do
    resume=()
    if [ -n "${RESUME_FROM:-}" ] && [ -f "$RESUME_FROM/ladder-$size/log.json" ]; then
      cp -r "$RESUME_FROM/ladder-$size" "$out/" && resume=(--resume)
      note "resuming ladder-$size from $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$out/ladder-$size/log.json") evaluations"
    fi
    timed "${EVOLVE_LIMIT:-540}" "ladder-$size.txt" build/kiln evolve run --problem reduce-sum-int32 \
      --size "$size" --seed-naive --budget "$budget" --population 16 --seed "${LADDER_SEED:-1}" \
      "${judge[@]}" --pool "$out/pool-$size.json" --out "$out/ladder-$size" "${resume[@]}"
    tail -4 "$out/ladder-$size.txt" | tee -a "$out/summary.txt"
    rm -f "$out"/ladder-"$size"/candidates/*.so  # keep sources, logs and JSON; drop libraries
  done
fi

if step random; then
  for size in ${RANDOM_SIZES:-1e8}; do
    timed "${EVOLVE_LIMIT:-540}" "random-$size.txt" build/kiln evolve run --problem reduce-sum-int32 \
      --size "$size" --random --budget "$budget" --population 16 --seed "${LADDER_SEED:-1}" \
      "${judge[@]}" --pool "$out/pool-random.json" --out "$out/random-$size"
    tail -4 "$out/random-$size.txt" | tee -a "$out/summary.txt"
    rm -f "$out"/random-"$size"/candidates/*.so
  done
fi
if step sanitizer; then
  dir=/tmp/kiln_evolve_gpu_reduce-sum-int32
  [ -d "$dir" ] || timed 300 tests-evolve-sum.txt build/kiln_gpu_tests --gtest_filter='EvolveGpu.WholeSum*'
  sources=(docs/results/2026-11-24-evolve/h100-run5/ladder-1e8/best.cu)
  for f in "$dir"/*.cu; do
    grep -q "unrolled-last-warp\|last-block-combine" "$f" && sources+=("$f")
  done
  for src in "${sources[@]}"; do
    for tool in memcheck racecheck; do
      name=$(basename "$src" .cu)-$tool
      timed 200 "sanitizer-$name.txt" compute-sanitizer --tool "$tool" --target-processes all \
        --report-api-errors no build/kiln bench candidate --problem reduce-sum-int32 --sizes 1e6 \
        -g 1 --source "$src" --build-dir "$out/sanitizer-build" -w 1 -n 2 --trials 1 --timeout 120
      note "$name: $(grep -m1 -io 'genome [0-9a-f]*: .*' "$src" | cut -c1-140)"
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY|accepted|rejected" "$out/sanitizer-$name.txt" | tee -a "$out/summary.txt"
    done
  done
fi

if step cub; then
  for size in ${CUB_SIZES:-1e8 1e9}; do
    for round in 1 2; do
      for src in tests/candidates/reduce_sum_cub.cu "$out"/ladder-"$size"/best.cu; do
        [ -f "$src" ] || continue
        name=$(basename "$(dirname "$src")")-$(basename "$src" .cu)
        timed 120 "judge-$size-$name-$round.txt" build/kiln bench candidate --problem reduce-sum-int32 \
          --sizes "$size" -g 1 --source "$src" --build-dir "$out/judge-build" "${judge[@]}" \
          --json "$out/judge-$size-$name-$round.json"
        grep -E "reduce-sum-int32 " "$out/judge-$size-$name-$round.txt" | tee -a "$out/summary.txt"
      done
    done
  done
fi
if step speed; then
  for spec in ${SPEED_PROBLEMS:-kb1-19-relu:small reduce-sum-int32:1e8}; do
    problem=${spec%%:*}; size=${spec##*:}
    for mode in batch alone; do
      flag=(); [ "$mode" = alone ] && flag=(--judge-alone)
      timed 300 "speed-$problem-$size-$mode.txt" build/kiln evolve run --problem "$problem" \
        --size "$size" --budget "${SPEED_BUDGET:-36}" --seed 7 "${judge[@]}" "${flag[@]}" \
        --pool "$out/pool-speed-$mode.json" --out "$out/speed-$problem-$size-$mode"
      note "$problem $size $mode: $(grep -E '^# [0-9]+ evaluations in' "$out/speed-$problem-$size-$mode.txt")"
    done
  done
fi
if step compare; then
  for spec in ${COMPARE_PROBLEMS:-reduce-sum-int32:1e8 kb1-47-sum-reduction:small}; do
    problem=${spec%%:*}; size=${spec##*:}
    for seed in ${COMPARE_SEEDS:-1 2 3}; do
      for mode in guided random; do
        flag=(); [ "$mode" = random ] && flag=(--random)
        name="compare-$problem-$size-$mode-$seed"
        timed 120 "$name.txt" build/kiln evolve run --problem "$problem" --size "$size" \
          --budget "${COMPARE_BUDGET:-48}" --seed "$seed" "${judge[@]}" "${flag[@]}" \
          --pool "$out/pool-$name.json" --out "$out/$name"
        note "$problem $size $mode seed $seed: $(grep -E '^# best U' "$out/$name.txt")"
        rm -f "$out/$name"/candidates/*.so
      done
    done
  done
  python3 - "$out/summary.txt" <<'PY' | tee -a "$out/summary.txt"
import re, statistics, sys
best = {}
for line in open(sys.argv[1]):
    m = re.match(r"(\S+) (\S+) (guided|random) seed (\d+): # best U ([0-9.]+)", line)
    if m:
        best.setdefault((m[1], m[2], m[3]), []).append(float(m[5]))
for (problem, size, mode), us in sorted(best.items()):
    print(f"median best U {problem} {size} {mode}: {statistics.median(us):.3f} over seeds {us}")
PY
fi
pack
