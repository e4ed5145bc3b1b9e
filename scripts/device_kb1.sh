#!/usr/bin/env bash
# Device run for issue 19: the kb1 problems (KernelBench level-1 equivalents) and the hardened
# judge, on one GPU. Binaries come compressed in carry/ (scripts/pack_carry.sh build/kiln
# build/kiln_gpu_tests). Steps:
#   tests      the judge's GPU tests: every kb1 cheat candidate rejected with its reason, the correct
#              ones accepted, the floor check, kb1 small sizes with kiln's solutions; and the
#              multi-rank candidate and suite tests (ranks sharing the GPU) under the new protocol
#   small      `kiln bench suite` on every kb1 problem at size small, with PyTorch eager's times
#   kb         the same at KernelBench's sizes, PyTorch eager timed just before (same call)
#   (KB1_PROBLEMS: comma-separated globs, default every kb1 problem)
#   sanitizer  compute-sanitizer memcheck and racecheck on the new kernels (small sizes)
# Writes /tmp/kiln-kb1/k/ and packs it as $OUT/kb1.tar.gz.
# Usage: bash scripts/device_kb1.sh [tests] [small] [kb] [sanitizer]   (env KB1_PROBLEMS: glob)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
steps=${*:-tests small kb sanitizer}
out=/tmp/kiln-kb1/k; rm -rf "$out"; mkdir -p "$out"
archive=kb1
source scripts/device_steps.sh
bash scripts/unpack_carry.sh >/dev/null
source scripts/device_env.sh >/dev/null
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader)"
note "kiln: $(build/kiln --version)"
problems=${KB1_PROBLEMS:-kb1-*}
# The problems kiln has, for PyTorch's script (the same names).
mapfile -t names < <(build/kiln bench suite --list | awk '$1 ~ /^kb1-/ {print $1}' |
  python3 -c 'import fnmatch,sys; [print(l.strip()) for l in sys.stdin if any(fnmatch.fnmatch(l.strip(), g) for g in sys.argv[1].split(","))]' "$problems")
note "problems: ${#names[@]}"

if step tests; then
  timed 400 tests-kb1.txt build/kiln_gpu_tests --gtest_filter='CandidateGpu.Kb1*'
  grep -E "^\[       OK|^\[  FAILED|^\[  PASSED" "$out/tests-kb1.txt" | tee -a "$out/summary.txt"
  KILN_TEST_RANKS_PER_GPU=4 timed 400 tests-multirank.txt build/kiln_gpu_tests \
    --gtest_filter='CandidateGpu.*:SuiteGpu.*:-CandidateGpu.Kb1*'
  grep -E "^\[       OK|^\[  FAILED|^\[  PASSED" "$out/tests-multirank.txt" | tee -a "$out/summary.txt"
fi

for size in small kb; do
  if step "$size"; then
    timed 300 "torch-$size.txt" python3 scripts/kb1_torch_eager.py --size "$size" \
      --problems "${names[@]}" --json "$out/torch-$size.json"
    tail -3 "$out/torch-$size.txt" | tee -a "$out/summary.txt"
    # KernelBench's sizes: fewer calls (each guarded call also runs the plain reference, up to
    # a few hundred ms for the largest products).
    timing="-w 5 -n 20 --trials 3"; [ "$size" = kb ] && timing="-w 2 -n 10 --trials 2"
    timed 540 "suite-$size.txt" build/kiln bench suite -g 1 --problems "$problems" --sizes "$size" \
      $timing --timeout 120 --torch-json "$out/torch-$size.json" --json "$out/suite-$size.json"
    grep -E "^kb1|correctness|fast_" "$out/suite-$size.txt" | tee -a "$out/summary.txt"
  fi
done

if step sanitizer; then
  for tool in memcheck racecheck; do
    # NCCL's own probes of kernel images are API errors, not memory errors: not reported.
    timed 300 "sanitizer-$tool.txt" compute-sanitizer --tool "$tool" --target-processes all \
      --report-api-errors no build/kiln bench suite -g 1 --problems "${KB1_SANITIZE:-$problems}" \
      --sizes small --trials 1 -w 1 -n 2 --timeout 600
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|correctness" "$out/sanitizer-$tool.txt" | tee -a "$out/summary.txt"
  done
fi
pack
