#!/usr/bin/env bash
# Call 5 of 2026-11-30i (issue 17), one H200: call 4 again after its fix: the heuristic's first
# cublasLt candidate (torch.matmul's choice) always joins the sustained-load stage (in call 4 the
# 10% cut left it out at 4096x8192x8192 and the baseline got slower there).
# Prepared on the CPU machine:
#   ninja -C build -j2 kiln kiln_gpu_tests kiln_gemm_capi
#   bash scripts/pack_carry.sh build/kiln build/kiln_gpu_tests build/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-11-30i-uniform-epilogue/scripts/call5.sh",
#             carry=["carry"], timeout_s=600)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-call5/c; rm -rf "$out"; mkdir -p "$out"; archive=call5
steps="tests same"; DEADLINE=430
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
if step tests; then
  export KILN_TEST_RANKS_PER_GPU=4
  gtest_each 150 tests-baseline.txt 'SignalingGemmGpu.SearchRanksEveryCandidateAndRunsTheBest:OverlapGpu.SerialAllReduceRunsAsTheBaseline:OverlapGpu.SerialAllReduceRunsAsTheBaselineTwoRanks:AutomaticPlanGpu.*'
  grep -E "^\[ +(OK|FAILED|PASSED|EXITED)|SKIPPED" "$out/tests-baseline.txt" | tee -a "$out/summary.txt"
  unset KILN_TEST_RANKS_PER_GPU
fi
if step same; then
  for run in bf16 fp16 bf16-again; do
    dtype=${run%-again}; extra=(); [ "$dtype" = bf16 ] && extra=(--twin)
    capped 240 "same-process-$run.txt" python3 scripts/torch_gemm_same_process.py --dtype "$dtype" \
      "${extra[@]}" --json "$out/same-process-$run.json"
    cat "$out/same-process-$run.txt" >> "$out/summary.txt"
  done
fi
pack
