#!/usr/bin/env bash
# Call 3 of 2026-11-30j (issue 17), one H200: call 2 ran every 128x144 case of the test in its
# own process (all correct, none slower than 4 s), so EveryConfigurationMatchesCublas runs again
# here under a 300 s limit, racecheck on the two 128x144 kernels under 150 s (call 1's 60 s was
# too short: the 19-configuration run took 94 s in 2026-11-30i), then the fp16 table.
# Device: run(command="bash docs/results/2026-11-30j-wave-fit/scripts/call3.sh", carry=["carry"])
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-call3/c; rm -rf "$out"; mkdir -p "$out"; archive=call3
steps="${STEPS:-tests racecheck fp16}"; DEADLINE=${DEADLINE:-585}
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
new=(--config "tile=128x144 cluster=2x1 kernel=pingpong" --config "tile=128x144 cluster=1x2 kernel=pingpong")
if step tests; then
  capped 300 tests-configs.txt build/kiln_gpu_tests --gtest_filter='SignalingGemmGpu.EveryConfigurationMatchesCublas'
  grep -E "^\[ +(OK|FAILED|PASSED) |checked" "$out/tests-configs.txt" | tee -a "$out/summary.txt"
fi
if step racecheck; then
  capped 150 sanitizer-racecheck.txt compute-sanitizer --tool racecheck --report-api-errors no \
    --print-limit 100000 build/kiln overlap gemm --shape 1000x520x264 "${new[@]}" \
    -w 1 -n 2 --rounds 1 --caps 6
  grep -E "RACECHECK SUMMARY|correctness" "$out/sanitizer-racecheck.txt" | tee -a "$out/summary.txt"
fi
if step fp16; then
  capped 140 same-process-fp16.txt python3 scripts/torch_gemm_same_process.py --dtype fp16 \
    --json "$out/same-process-fp16.json"
  cat "$out/same-process-fp16.txt" >> "$out/summary.txt"
fi
pack
