#!/usr/bin/env bash
# Call 2 of 2026-11-30i (issue 17), one H200: issue 17's acceptance table with the uniform-register
# epilogue (55f76a4): torch.matmul, kiln's cuBLAS baseline, kiln's searched GEMM and (bf16) the
# CUTLASS twin of kiln's chosen configuration, interleaved in one process, bf16 then fp16, then
# bf16 again (run-to-run spread) while time is left; and the search test that failed in call 1,
# after its fix.
# Prepared on the CPU machine:
#   ninja -C build -j2 kiln kiln_gpu_tests kiln_gemm_capi
#   bash scripts/pack_carry.sh build/kiln build/kiln_gpu_tests build/libkiln_gemm_capi.so
# Device: run(command="bash docs/results/2026-11-30i-uniform-epilogue/scripts/call2.sh",
#             carry=["carry"], timeout_s=600)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-call2/c; rm -rf "$out"; mkdir -p "$out"; archive=call2
steps="search same"; DEADLINE=575
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
if step search; then
  capped 60 tests-search.txt build/kiln_gpu_tests --gtest_filter='SignalingGemmGpu.SearchRanksEveryCandidateAndRunsTheBest'
  grep -E "^\[ +(OK|FAILED|PASSED) |out of order|stage" "$out/tests-search.txt" | tee -a "$out/summary.txt"
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
