#!/usr/bin/env bash
# Device calls for issue 20's problem-set run. The set's state lives in evolve-set/ (git-ignored):
# each call brings back evolve-set.tar.gz (logs, reports, best kernels, the pool, PyTorch eager's
# times; no compiled candidates), which the next call carries in again, so `kiln evolve set`
# resumes where the last call stopped (a cut problem from its log, without recompiling).
#   here, after a call:  rm -rf evolve-set && mkdir evolve-set &&
#                        tar -xzf /work/.device/N/evolve-set.tar.gz -C evolve-set
#   next call:           carry ["carry", "evolve-set"]
# (evolve-set/RUNS/build-cache's libraries stay behind too; its units/, one object per CUTLASS
# sm90 configuration, travel.)
# Steps (arguments, in order):
#   tests  the GPU tests of the families not yet run on a GPU (EVOLVE_TESTS to change)
#   eager  scripts/kb1_torch_eager.py at SIZE on PATTERNS (new rows merged into evolve-set/eager.json)
#   versus PyTorch eager and the evolved best.cu of PATTERNS taking turns (ROUNDS, VERSUS_LIMIT)
#   set    kiln evolve set on PATTERNS at SIZE, BUDGET per problem, POPULATION (16), TIMING
#          (screen), into evolve-set/RUNS (runs), cut at SET_LIMIT seconds; POOL_FROM: pools to
#          merge into evolve-set/pool.json first; PARALLEL problems searched at once (1); SEEDS: a
#          seed list (`kiln evolve set --seeds`, e.g. scripts/probes/norm-grid.txt's winners)
# Needs CUTLASS's headers for the matmul and attention candidates: pack them with
#   bash scripts/pack_carry.sh build/kiln build/kiln_gpu_tests .deps/cutlass-4.2.0.0/include
set -uo pipefail
set -f  # PATTERNS are kiln's globs, not the shell's
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
o=${OUT:-out}; mkdir -p "$o" evolve-set
summary="$o/summary.txt"
PATTERNS=${PATTERNS:-"kb1-*"}; SIZE=${SIZE:-kb}; BUDGET=${BUDGET:-100}; SET_LIMIT=${SET_LIMIT:-420}
RUNS=${RUNS:-runs}; POPULATION=${POPULATION:-16}; TIMING=${TIMING:-screen}
[ $# -gt 0 ] || { echo "usage: $0 tests|eager|versus|set ..." >&2; exit 2; }
echo "device_evolve_set: $* on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) at $(date -u +%FT%TZ)" | tee "$summary"
[ -f carry/MANIFEST ] && sed "s/^/carry: /" carry/MANIFEST | tee -a "$summary"
for step in "$@"; do
  case $step in
    tests)
      timeout "${TESTS_LIMIT:-560}" build/kiln_gpu_tests \
        --gtest_filter="${EVOLVE_TESTS:-EvolveGpu.LossFamily*:EvolveGpu.Blas2*:EvolveGpu.Attention*:EvolveGpu.MatmulFamily*}" \
        > "$o/tests-evolve.txt" 2>&1
      echo "tests exit $?" | tee -a "$summary"
      grep -E "^\[ +(OK|FAILED) |U [0-9]" "$o/tests-evolve.txt" | tee -a "$summary" ;;
    eager)
      # PyTorch eager's times for PATTERNS, merged into evolve-set/eager.json (rows already
      # there are kept: every speedup of a set is against one measurement per problem).
      # shellcheck disable=SC2086
      timeout 500 python3 scripts/kb1_torch_eager.py --problems $PATTERNS --size "$SIZE" \
        --json "$o/eager-new.json" > "$o/torch-eager.txt" 2>&1
      echo "eager exit $?" | tee -a "$summary"; tail -3 "$o/torch-eager.txt" | tee -a "$summary"
      python3 scripts/merge_eager_json.py evolve-set/eager.json "$o/eager-new.json" | tee -a "$summary" ;;
    set)
      # POOL_FROM: earlier runs' pools (e.g. docs/results/*/pool*.json) merged into the set's own
      # first, so that retrieval starts from everything measured so far.
      if [ -n "${POOL_FROM:-}" ]; then
        # shellcheck disable=SC2086
        build/kiln evolve merge-pools evolve-set/pool.json $POOL_FROM --out evolve-set/pool.json | tail -1 | tee -a "$summary"
      fi
      # Prebuilt CUTLASS sm90 units (scripts/prebuild_sm90_units.sh evolve-set/sm90-units) join
      # the set's build cache, so a configuration met for the first time is not compiled here.
      if [ -d evolve-set/sm90-units/units ]; then
        mkdir -p "evolve-set/$RUNS/build-cache/units"
        cp -n evolve-set/sm90-units/units/*.o "evolve-set/$RUNS/build-cache/units/" 2> /dev/null
        echo "prebuilt units: $(ls evolve-set/sm90-units/units/*.o 2> /dev/null | wc -l)" | tee -a "$summary"
      fi
      eager=(); [ -f evolve-set/eager.json ] && eager=(--torch-json evolve-set/eager.json)
      # shellcheck disable=SC2086
      timeout "$SET_LIMIT" build/kiln evolve set --problems $PATTERNS --size "$SIZE" \
        --budget "$BUDGET" --population "$POPULATION" --seed "${SEED:-1}" "${eager[@]}" \
        --pool evolve-set/pool.json ${SEEDS:+--seeds "$SEEDS"} --out "evolve-set/$RUNS" -w 3 -n 10 --trials 2 --timeout 60 \
        --timing "$TIMING" --parallel-problems "${PARALLEL:-1}" \
        > "$o/set-$(date +%H%M%S).txt" 2>&1
      echo "set exit $? (124: cut by SET_LIMIT; the next call resumes)" | tee -a "$summary"
      [ -f "evolve-set/$RUNS/summary.md" ] && cp "evolve-set/$RUNS/summary.md" "$o/summary.md"
      [ -f "evolve-set/$RUNS/set-run.json" ] && cat "evolve-set/$RUNS/set-run.json" | tee -a "$summary" ;;
    versus)
      # PyTorch eager and each evolved best.cu of PATTERNS taking turns in this call
      # (scripts/kb1_eager_vs_evolved.py): the speedups of the same call. Compiled first, on
      # every core.
      # shellcheck disable=SC2086
      python3 scripts/kb1_eager_vs_evolved.py --runs "evolve-set/$RUNS" --problems $PATTERNS \
        --size "$SIZE" --prepare > "$o/versus-prepare.txt" 2>&1
      # shellcheck disable=SC2086
      timeout "${VERSUS_LIMIT:-500}" python3 scripts/kb1_eager_vs_evolved.py --runs "evolve-set/$RUNS" \
        --problems $PATTERNS --size "$SIZE" --rounds "${ROUNDS:-2}" --json "$o/eager-vs-evolved.json" \
        > "$o/eager-vs-evolved.txt" 2>&1
      echo "versus exit $?" | tee -a "$summary"; tail -2 "$o/eager-vs-evolved.txt" | tee -a "$summary" ;;
    *) echo "unknown step $step" | tee -a "$summary" ;;
  esac
done
# The state for the next call, without compiled candidates (they are rebuilt when needed), but
# with the build caches' kiln-unit objects (a CUTLASS sm90 GEMM each, ~100 KB, ~40 s to compile).
tar -czf "$o/evolve-set.tar.gz" --exclude='candidates' --exclude='build-cache/*.so' \
  --exclude='build-cache/*.tmp' --exclude='eager-vs-evolved' -C evolve-set .
ls -la "$o/evolve-set.tar.gz" | tee -a "$summary"
