#!/usr/bin/env bash
# Device calls for issue 20's search-quality and sanitizer criteria. Steps (arguments, in order):
#   compare    guided (strategy crossover + roofline guidance) against plain random search
#              (`--random`) over the same genomes, same budget, seeds 1..3, on COMPARE_PROBLEMS at
#              COMPARE_SIZE (small), each run from an empty pool (no retrieval: the search alone),
#              guided and random of a seed side by side (COMPARE_LIMIT seconds each, 300);
#              COMPARE_SEEDS ("1 2 3"): a subset, to spread a slow family's seeds over calls;
#              COMPARE_SEEDS_TOGETHER=1: every seed's runs at once (the judge still times one
#              kernel at a time; the compiles overlap), for families whose runs wait on compiles;
#              compare.md: each run's best U (guarded, confirmed) and the median per mode;
#              COMPARE_MODES ("guided random"; "uniform" is guided with --uniform-knobs, knob
#              mutations blind to the knobs' measured effect; "ncu" is guided with --ncu, Nsight Compute's
#              counters in the guidance); the runs' logs and reports in compare.tar.gz
#   speed      engine speed by mode (SPEED_MODES, "split nvcc" by default): split = the default
#              (judge server, generated kernels built split by NVRTC and the host compiler), nvcc =
#              the server with every kernel built by nvcc (--nvcc-only), launch = a judge launch
#              per batch (--launch-per-batch): `kiln evolve run` on SPEED_CASES ("problem:size
#              ..."), SPEED_BUDGET evaluations, seed 1, the modes one after the other (never side
#              by side: the measure is wall time); speed.md: evaluations/s, compile and judge
#              seconds, the judge's own phases and the rest ("launches"), and the best U of each
#   speedset   the same on a set run: `kiln evolve set` on SPEEDSET_PATTERNS at SPEEDSET_SIZE
#              (kb), SPEEDSET_BUDGET (16) per problem, --parallel-problems SPEEDSET_PARALLEL (4),
#              each of SPEEDSET_MODES ("split nvcc"), SPEEDSET_SCREEN_TRIALS (1) correctness trials
#              per screened candidate, SPEEDSET_TRIALS (2) per confirmation; each mode's
#              set-run.json
#   sanitizer  compute-sanitizer (SAN_TOOLS: memcheck by default) on the evolved best kernels of
#              SAN_PROBLEMS (evolve-set/screen/<problem>/best.cu, carried in) and on SAN_SOURCES
#              ("problem=path ..."), each judged at size small (SAN_PROBLEMS= , set but empty:
#              SAN_SOURCES alone; unset: the five default problems)
# Usage: bash scripts/device_evolve_quality.sh [compare] [speed] [sanitizer]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
o=${OUT:-out}; mkdir -p "$o"
# The flags of an engine mode (speed, speedset).
mode_flags() {
  case "$1" in
    split | server) ;;
    nvcc) echo --nvcc-only ;;
    launch) echo --launch-per-batch ;;
    *) echo "unknown engine mode $1 (split, nvcc, launch)" >&2; return 1 ;;
  esac
}
summary="$o/summary-quality.txt"
COMPARE_PROBLEMS=${COMPARE_PROBLEMS:-"kb1-23-softmax kb1-45-avgpool-2d"}
COMPARE_SIZE=${COMPARE_SIZE:-small}; COMPARE_BUDGET=${COMPARE_BUDGET:-16}
SAN_PROBLEMS=${SAN_PROBLEMS-"kb1-95-cross-entropy-loss kb1-89-cumsum kb1-45-avgpool-2d kb1-4-matvec kb1-2-matmul"}
echo "device_evolve_quality: $* on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) at $(date -u +%FT%TZ)" | tee "$summary"
[ -f carry/MANIFEST ] && sed "s/^/carry: /" carry/MANIFEST | tee -a "$summary"
for step in "$@"; do
  case $step in
    compare)
      dir=/tmp/evolve-compare; rm -rf "$dir"; mkdir -p "$dir" "$o/compare"
      # COMPARE_UNITS: a folder holding units/ (CUTLASS GEMM units compiled ahead,
      # scripts/prebuild_sm90_units.sh) shared through one build cache by every run, so a matmul
      # evaluation does not spend its turn compiling CUTLASS; the runs still compare at equal budget.
      cache=()
      if [ -n "${COMPARE_UNITS:-}" ] && [ -d "$COMPARE_UNITS/units" ]; then
        # Beside the runs' folder, not in it: the table below takes each folder there for a problem.
        rm -rf "$dir-cache" && mkdir -p "$dir-cache/units" && cp -p "$COMPARE_UNITS"/units/*.o "$dir-cache/units/" 2> /dev/null
        cache=(--build-cache "$dir-cache")
      fi
      for p in $COMPARE_PROBLEMS; do
        for seed in ${COMPARE_SEEDS:-1 2 3}; do
          # Guided and random side by side: one compiles while the other is judged (the judge
          # takes the GPU in turns across processes, KILN_JUDGE_LOCK); each run's best U is
          # what is compared, not its time.
          for mode in ${COMPARE_MODES:-guided random}; do
            flag=(); [ "$mode" = random ] && flag=(--random); [ "$mode" = ncu ] && flag=(--ncu)
            [ "$mode" = uniform ] && flag=(--uniform-knobs)
            timeout "${COMPARE_LIMIT:-300}" build/kiln evolve run --problem "$p" --size "$COMPARE_SIZE" \
              --budget "$COMPARE_BUDGET" --population 8 --seed "$seed" "${flag[@]}" "${cache[@]}" \
              --pool "$dir/pool-$p-$mode-$seed.json" --out "$dir/$p/$mode-$seed" \
              -w 2 -n 5 --trials 1 --timeout 60 --confirm 1 > "$o/compare/$p-$mode-$seed.txt" 2>&1 &
          done
          [ -n "${COMPARE_SEEDS_TOGETHER:-}" ] || wait
        done
        wait
        for seed in ${COMPARE_SEEDS:-1 2 3}; do
          for mode in ${COMPARE_MODES:-guided random}; do
            echo "$p $mode seed $seed: $(tail -2 "$o/compare/$p-$mode-$seed.txt" | head -1)" | tee -a "$summary"
            cp "$dir/$p/$mode-$seed/log.json" "$o/compare/$p-$mode-$seed-log.json" 2>/dev/null
            cp "$dir/$p/$mode-$seed/report.json" "$o/compare/$p-$mode-$seed-report.json" 2>/dev/null
          done
        done
      done
      COMPARE_SEEDS=${COMPARE_SEEDS:-1 2 3} python3 - "$dir" "$o/compare.md" ${COMPARE_MODES:-guided random} <<'PY' | tee -a "$summary"
import json, os, statistics, sys
root, out, modes = sys.argv[1], sys.argv[2], sys.argv[3:]
seeds = [int(s) for s in os.environ["COMPARE_SEEDS"].split()]
lines = [f"| problem | mode | best U per seed ({', '.join(map(str, seeds))}; guarded) | median | search's best screened U per seed |",
         "|---|---|---|---|---|"]
for p in sorted(os.listdir(root)):
    if not os.path.isdir(os.path.join(root, p)):
        continue
    for mode in modes:
        best, screened = [], []
        for seed in seeds:
            path = os.path.join(root, p, f"{mode}-{seed}", "report.json")
            if not os.path.exists(path):
                best.append(None); screened.append(None); continue
            r = json.load(open(path))
            e = r["best"]["evaluation"]
            best.append(e["roof_us"] / e["us"] if e.get("correct") and e.get("us") else 0.0)
            s = r["search_best"]["evaluation"]
            screened.append(s["roof_us"] / s["us"] if s.get("correct") and s.get("us") else 0.0)
        have = [b for b in best if b is not None]
        med = f"{statistics.median(have):.3f}" if have else "-"
        fmt = lambda v: ", ".join("-" if x is None else f"{x:.3f}" for x in v)
        lines.append(f"| {p} | {mode} | {fmt(best)} | {med} | {fmt(screened)} |")
open(out, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
      # One archive: the device brings back only so many files.
      tar -czf "$o/compare.tar.gz" -C "$o" compare && rm -rf "$o/compare"
      ;;
    speed)
      dir=/tmp/evolve-speed; rm -rf "$dir"; mkdir -p "$dir" "$o/speed"
      for case in ${SPEED_CASES:-kb1-45-avgpool-2d:small kb1-23-softmax:small kb1-23-softmax:kb kb1-42-maxpool-2d:kb}; do
        p=${case%%:*}; size=${case#*:}
        for mode in ${SPEED_MODES:-split nvcc}; do
          # shellcheck disable=SC2207
          flag=($(mode_flags "$mode")) || continue
          run="$dir/$p-$size-$mode"
          timeout "${SPEED_LIMIT:-150}" build/kiln evolve run --problem "$p" --size "$size" \
            --budget "${SPEED_BUDGET:-24}" --population 8 --seed 1 "${flag[@]}" \
            --pool "$dir/pool-$p-$size-$mode.json" --out "$run" \
            -w 2 -n 5 --trials 1 --timeout 60 --confirm 1 > "$o/speed/$p-$size-$mode.txt" 2>&1
          echo "speed $p $size $mode: exit $? $(grep '^# time:' "$o/speed/$p-$size-$mode.txt" | tail -1) $(grep 'evaluations in' "$o/speed/$p-$size-$mode.txt" | tail -1)" | tee -a "$summary"
          cp "$run/report.json" "$o/speed/$p-$size-$mode-report.json" 2> /dev/null
          for log in "$run"/candidates/serve-*/server.log; do
            [ -f "$log" ] && cp "$log" "$o/speed/$p-$size-$mode-$(basename "$(dirname "$log")").log"
          done
        done
      done
      python3 - "$o/speed" "$o/speed.md" <<'PY' | tee -a "$summary"
import glob, json, os, sys
root, out = sys.argv[1], sys.argv[2]
lines = ["| problem | size | judge | evaluations/s | evaluations | seconds | compile s | judge s | judge phases s | launches s | best U (confirmed) |",
         "|---|---|---|---|---|---|---|---|---|---|---|"]
for path in sorted(glob.glob(os.path.join(root, "*-report.json"))):
    r = json.load(open(path))
    mode = {"split": "server, split builds", "server": "server", "nvcc": "server, nvcc builds",
            "launch": "launch per batch"}[path[:-len("-report.json")].rsplit("-", 1)[1]]
    e = r.get("engine_seconds", {})
    phases = sum(v for v in e.get("judge_phases", {}).values())
    b = r["best"]["evaluation"]
    u = b["roof_us"] / b["us"] if b.get("correct") and b.get("us") else 0.0
    lines.append(f"| {r['problem']} | {r['size']} | {mode} | {r['evaluations_per_second']:.2f} | {r['evaluations']} | "
                 f"{r['seconds']:.1f} | {e.get('compile', 0):.1f} | {e.get('judge', 0):.1f} | {phases:.1f} | "
                 f"{e.get('judge', 0) - phases:.1f} | {u:.3f} |")
open(out, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
      ;;
    speedset)
      dir=/tmp/evolve-speedset; rm -rf "$dir"; mkdir -p "$dir" "$o/speedset"
      for mode in ${SPEEDSET_MODES:-split nvcc}; do
        # shellcheck disable=SC2207
        flag=($(mode_flags "$mode")) || continue
        # The patterns split on spaces, never matched against files here.
        set -f
        # shellcheck disable=SC2206
        patterns=(${SPEEDSET_PATTERNS:-kb1-19-* kb1-2?-* kb1-30-*})
        set +f
        timeout "${SPEEDSET_LIMIT:-250}" build/kiln evolve set --problems "${patterns[@]}" \
          --size "${SPEEDSET_SIZE:-kb}" --budget "${SPEEDSET_BUDGET:-16}" --population 8 --seed 1 \
          "${flag[@]}" --pool "$dir/pool-$mode.json" --out "$dir/$mode" -w 3 -n 10 --trials "${SPEEDSET_TRIALS:-2}" \
          --screen-trials "${SPEEDSET_SCREEN_TRIALS:-1}" \
          --timeout 60 --confirm 1 --parallel-problems "${SPEEDSET_PARALLEL:-4}" \
          > "$o/speedset/set-$mode.txt" 2>&1
        echo "speedset $mode: exit $? $(tr -d '\n' < "$dir/$mode/set-run.json" 2> /dev/null)" | tee -a "$summary"
        # Where the set's time went, summed over its problems (each search's "# time:" line).
        python3 - "$o/speedset/set-$mode.txt" <<'PY' | tee -a "$summary"
import re, sys
totals, problems = {}, 0
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r"time: compiling ([\d.]+) s, judging ([\d.]+) s \((.*)\)", line)
    if not m:
        continue
    problems += 1
    totals["compile"] = totals.get("compile", 0) + float(m.group(1))
    totals["judge"] = totals.get("judge", 0) + float(m.group(2))
    for part in m.group(3).split(", "):
        name, value = part.rsplit(" ", 1)
        totals[name] = totals.get(name, 0) + float(value)
print(f"  summed over {problems} problems: " + ", ".join(f"{k} {v:.1f} s" for k, v in totals.items()))
PY
        cp "$dir/$mode/set-run.json" "$o/speedset/set-run-$mode.json" 2> /dev/null
        cp "$dir/$mode/summary.md" "$o/speedset/summary-$mode.md" 2> /dev/null
      done ;;
    sanitizer)
      # SAN_PROBLEMS' evolved best.cu, then SAN_SOURCES ("problem=path ..."), under each tool of
      # SAN_TOOLS (memcheck; racecheck and synccheck for shared-memory and barrier code).
      mkdir -p "$o/sanitizer"
      pairs=()
      for p in $SAN_PROBLEMS; do pairs+=("$p=evolve-set/screen/$p/best.cu"); done
      for pair in ${SAN_SOURCES:-}; do pairs+=("$pair"); done
      for pair in "${pairs[@]}"; do
        p=${pair%%=*}; src=${pair#*=}
        [ -f "$src" ] || { echo "sanitizer: $src missing" | tee -a "$summary"; continue; }
        # Built (and judged once) outside the tool first: under it, nvcc's own processes are
        # watched too (--target-processes all) and a build can take the whole limit.
        timeout 200 build/kiln bench candidate --problem "$p" --sizes small --source "$src" \
          --build-dir /tmp/kiln-san --reuse-builds -w 1 -n 2 --trials 1 --timeout 120 \
          > "$o/sanitizer/$p-$(basename "${src%.cu}")-build.txt" 2>&1
        for tool in ${SAN_TOOLS:-memcheck}; do
          log="$o/sanitizer/$p-$(basename "${src%.cu}")-$tool.txt"
          timeout "${SAN_LIMIT:-150}" compute-sanitizer --tool "$tool" --target-processes all --report-api-errors no \
            build/kiln bench candidate --problem "$p" --sizes small --source "$src" \
            --build-dir /tmp/kiln-san --reuse-builds -w 1 -n 2 --trials 1 --timeout 120 > "$log" 2>&1
          echo "sanitizer $tool $p $(basename "$src"): exit $? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' "$log" | sort | uniq -c | tr '\n' ' ') $(grep -h '# candidate' "$log" | tail -1)" | tee -a "$summary"
        done
      done
      tar -czf "$o/sanitizer.tar.gz" -C "$o" sanitizer && rm -rf "$o/sanitizer" ;;
    *) echo "unknown step $step" | tee -a "$summary" ;;
  esac
done
