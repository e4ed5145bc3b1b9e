#!/usr/bin/env bash
# Device calls for the normalisation family (issue 20): its GPU tests, compute-sanitizer on
# generated norm kernels, PyTorch eager and kiln's hand-written kernels at KernelBench's size, and
# evolve runs at that size. Steps are the arguments, in order:
#   tests      EvolveGpu.* (EVOLVE_TESTS to narrow)
#   sanitizer  memcheck, racecheck and synccheck on three generated kernels at size small
#   eager      scripts/kb1_torch_eager.py and `kiln bench suite --torch-json` on NORM_PROBLEMS
#   evolve     `kiln evolve run` per problem of EVOLVE_PROBLEMS (budget BUDGET, seed SEED, each cut
#              at EVOLVE_LIMIT seconds; POOL: a strategy pool file to seed from and add to); the
#              run's log, report, best kernel and plot come back
# NORM_PROBLEMS and EVOLVE_PROBLEMS may name any problems with a generator (e.g. the losses,
# kb1-94..96 and 98..100); the sanitizer step picks norm kernels only.
# Usage: bash scripts/device_norm_family.sh tests sanitizer eager evolve
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
o=${OUT:-out}; mkdir -p "$o"
summary="$o/summary.txt"
NORM_PROBLEMS=${NORM_PROBLEMS:-"kb1-23-softmax kb1-24-log-softmax kb1-33-batchnorm kb1-34-instancenorm kb1-35-groupnorm kb1-36-rmsnorm kb1-37-frobenius-norm kb1-38-l1-norm kb1-39-l2-norm kb1-40-layernorm"}
EVOLVE_PROBLEMS=${EVOLVE_PROBLEMS:-$NORM_PROBLEMS}
BUDGET=${BUDGET:-20}; SEED=${SEED:-1}; EVOLVE_LIMIT=${EVOLVE_LIMIT:-90}
[ $# -gt 0 ] || { echo "usage: $0 tests|sanitizer|eager|evolve ..." >&2; exit 2; }
echo "device_norm_family: $* on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) at $(date -u +%FT%TZ)" | tee "$summary"

sanitize() {
  # One generated kernel per mapping, judged at size small under each tool.
  local dir=/tmp/sanitize-norm; rm -rf "$dir"; mkdir -p "$dir" "$o/sanitizer"
  [ -d /tmp/kiln_evolve_gpu_kb1-23-softmax ] ||
    build/kiln_gpu_tests --gtest_filter='EvolveGpu.NormFamilyGeneratesCompilesAndIsJudged' > /dev/null 2>&1
  local found=0
  for pick in "kb1-23-softmax:cluster:kCluster = true" "kb1-40-layernorm:split:kSplit = true" \
              "kb1-36-rmsnorm:strided:kKeepRegisters = 64"; do
    local problem=${pick%%:*} rest=${pick#*:} src
    local kind=${rest%%:*} marker=${rest#*:}
    src=$(grep -l "$marker" /tmp/kiln_evolve_gpu_$problem/*.cu 2>/dev/null | head -1)
    [ -n "$src" ] || { echo "sanitizer: no generated source with '$marker' for $problem" | tee -a "$summary"; continue; }
    cp "$src" "$o/sanitizer/$problem-$kind.cu"; found=1
    for tool in memcheck racecheck synccheck; do
      timeout 200 compute-sanitizer --tool $tool --target-processes all --report-api-errors no \
        build/kiln bench candidate --problem $problem --sizes small -g 1 --source "$src" \
        -w 1 -n 2 --trials 1 --timeout 150 > "$o/sanitizer/$problem-$kind-$tool.txt" 2>&1
      echo "sanitizer $problem $kind $tool exit $?: $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' "$o/sanitizer/$problem-$kind-$tool.txt" | tr '\n' ' ')" | tee -a "$summary"
      grep -E "accepted|rejected|verdict" "$o/sanitizer/$problem-$kind-$tool.txt" | head -2 | tee -a "$summary"
    done
  done
  [ $found = 1 ] || echo "sanitizer: nothing found" | tee -a "$summary"
}

for step in "$@"; do
  case $step in
    tests)
      timeout 400 build/kiln_gpu_tests --gtest_filter="${EVOLVE_TESTS:-EvolveGpu.*}" > "$o/tests-evolve.txt" 2>&1
      echo "tests exit $?" | tee -a "$summary"
      grep -E "^\[ +(OK|FAILED) |U [0-9]" "$o/tests-evolve.txt" | tee -a "$summary" ;;
    sanitizer) sanitize ;;
    eager)
      patterns=(); for p in $NORM_PROBLEMS; do patterns+=("$p"); done
      timeout 240 python3 scripts/kb1_torch_eager.py --problems "${patterns[@]}" --size kb \
        --json "$o/torch-eager-norm-kb.json" > "$o/torch-eager.txt" 2>&1
      echo "eager exit $?" | tee -a "$summary"; tail -12 "$o/torch-eager.txt" | tee -a "$summary"
      timeout 240 build/kiln bench suite --problems $NORM_PROBLEMS --sizes kb \
        --torch-json "$o/torch-eager-norm-kb.json" --json "$o/suite-norm-kb.json" > "$o/suite-norm-kb.txt" 2>&1
      echo "suite exit $?" | tee -a "$summary"; grep -E "^kb1-" "$o/suite-norm-kb.txt" | tee -a "$summary" ;;
    evolve)
      # Everything of a run goes into one archive ($OUT brings back at most 8 files).
      keep=/tmp/evolve-norm-keep; rm -rf "$keep"; mkdir -p "$keep"
      for p in $EVOLVE_PROBLEMS; do
        run=/tmp/evolve-norm/$p; rm -rf "$run"
        start=$(date +%s)
        timeout "$EVOLVE_LIMIT" build/kiln evolve run --problem "$p" --size kb --budget "$BUDGET" \
          --population 8 --seed "$SEED" -w 3 -n 10 --trials 2 --timeout 60 --out "$run" \
          ${POOL:+--pool "$POOL"} \
          > "$keep/evolve-$p.txt" 2>&1
        echo "evolve $p exit $? in $(( $(date +%s) - start )) s" | tee -a "$summary"
        grep -E "^\[" "$keep/evolve-$p.txt" | tail -1 | tee -a "$summary"
        grep -E "^# best" "$keep/evolve-$p.txt" | tee -a "$summary"
        mkdir -p "$keep/$p"
        for f in log.json report.json report.md progress.svg run.json best.cu; do
          [ -f "$run/$f" ] && cp "$run/$f" "$keep/$p/"
        done
      done
      [ -n "${POOL:-}" ] && cp "$POOL" "$keep/pool-after.json"
      tar -C "$keep" -czf "$o/evolve-${EVOLVE_TAG:-norm}.tar.gz" . ;;
    *) echo "unknown step $step" | tee -a "$summary" ;;
  esac
done
