#!/usr/bin/env bash
# Call 4 of 2026-11-30j (issue 17), one H200: the tuner's automatic plan (it runs the search, now
# with 128x144 and the balanced cap), then issue 17's bf16 table again with a second search
# without the 128x144 width in the same rounds (call 1's A/B of the width ran out of time).
# Device: run(command="bash docs/results/2026-11-30j-wave-fit/scripts/call4.sh", carry=["carry"])
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-call4/c; rm -rf "$out"; mkdir -p "$out"; archive=call4
steps="${STEPS:-plan width}"; DEADLINE=${DEADLINE:-300}
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
if step plan; then
  KILN_TEST_RANKS_PER_GPU=4 gtest_each 60 tests-plan.txt 'AutomaticPlanGpu.*'
  grep -E "^\[ +(OK|FAILED|PASSED|EXITED) " "$out/tests-plan.txt" | tee -a "$out/summary.txt"
fi
if step width; then
  capped 220 same-process-bf16-width.txt python3 scripts/torch_gemm_same_process.py --dtype bf16 \
    --second-search without-tile-n=144 --json "$out/same-process-bf16-width.json"
  cat "$out/same-process-bf16-width.txt" >> "$out/summary.txt"
fi
pack
