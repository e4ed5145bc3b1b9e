#!/usr/bin/env bash
# Device run for the benchmark harness (issue 5) and the re-checks of this session's changes:
# GPU tests (suite, reduction, overlap), `kiln bench suite` on every GPU with default timing and
# with --preset pkb, every test candidate through `kiln bench candidate`, compute-sanitizer on the
# peer-memory kernels. Binaries come prebuilt in build/. Writes /tmp/kiln-suite/suite/ and packs it
# as $OUT/suite.tar.gz after every step.
# Usage: bash scripts/device_suite.sh [tests] [suite] [pkb] [candidates] [sanitizer]
# Env: TESTS (gtest filter), PROBLEMS (space-separated globs for the suite steps, default all),
# SANITIZE, SANITIZE_SIZES (space-separated problems and size names the sanitizer step runs).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/device_env.sh
steps=${*:-tests suite pkb}
out=/tmp/kiln-suite/suite; rm -rf "$out"; mkdir -p "$out"
pack() { tar -czf "${OUT:-out}/suite.tar.gz" -C "$(dirname "$out")" suite; }
step() { pack; [[ " $steps " == *" $1 "* ]]; }
run() { echo "+ $*"; "$@"; echo "exit $?"; }
gpus=$(nvidia-smi -L | wc -l)
{ nvidia-smi; nvidia-smi topo -m; } > "$out/device.txt" 2>&1
step tests && run timeout 300 build/kiln_gpu_tests --gtest_filter="${TESTS:-SuiteGpu.*:ReduceGpu.*:OverlapGpu.*}" > "$out/gpu_tests.txt" 2>&1
step tests && grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED) " "$out/gpu_tests.txt"
read -ra problem_list <<< "${PROBLEMS:-*}"  # space-separated globs, not expanded by the shell
problems=(--problems "${problem_list[@]}")
step suite && run timeout 200 build/kiln bench suite -g "$gpus" "${problems[@]}" --json "$out/suite-g$gpus.json" 2>&1 | tee "$out/suite-g$gpus.txt"
step pkb && run timeout 300 build/kiln bench suite -g "$gpus" "${problems[@]}" --preset pkb --json "$out/suite-g$gpus-pkb.json" 2>&1 | tee "$out/suite-g$gpus-pkb.txt"
if step candidates; then
  mkdir -p "$out/candidates"
  for source in tests/candidates/*.cu; do
    name=$(basename "$source" .cu)
    timeout 150 build/kiln bench candidate --problem allgather --source "$source" -g 2 \
      --sizes 64K,1M,16M --timeout 20 --time-limit 120 > "$out/candidates/$name.txt" 2>&1
    echo "$name (exit $?): $(grep -E '^# candidate' "$out/candidates/$name.txt" | tail -1)"
  done | tee "$out/candidates/summary.txt"
fi
if step sanitizer; then
  for tool in ${SANITIZER_TOOLS:-memcheck racecheck synccheck}; do
    timeout 200 compute-sanitizer --tool "$tool" --target-processes all --report-api-errors no \
      --kernel-name-exclude kns=ncclDevKernel \
      build/kiln bench suite -g 2 --problems ${SANITIZE:-ulysses-qkv-a2a} --sizes ${SANITIZE_SIZES:-S1K-h32} --trials 1 -w 1 -n 2 \
      > "$out/sanitizer-$tool.txt" 2>&1
    echo "$tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|correctness' "$out/sanitizer-$tool.txt" | tr '\n' ' ')"
  done
fi
pack
