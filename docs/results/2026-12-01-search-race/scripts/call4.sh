#!/usr/bin/env bash
# Call 4 (issue 17), the session's last ~290 s of device time: the search's other user
# (TunerGpu.SmallProfileOneRank) and one more bf16 table with the diverse-finalist search, shuffled,
# 16 rounds (call 3's race showed +-3% between two copies of one plan at 8 rounds).
# Device: run(command="bash docs/results/2026-12-01-search-race/scripts/call4.sh", carry=["carry"])
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
out=/tmp/kiln-call4/c; rm -rf "$out"; mkdir -p "$out"; archive=call4
steps="${STEPS:-tests table}"; DEADLINE=${DEADLINE:-230}
source scripts/device_steps.sh
note "binary: $(head -1 carry/MANIFEST)"
note "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.limit --format=csv,noheader)"
if step tests; then
  capped 60 tuner-test.txt build/kiln_gpu_tests --gtest_filter='TunerGpu.SmallProfileOneRank'
  grep -E "^\[ *(OK|FAILED|PASSED|SKIPPED) *\]" "$out/tuner-test.txt" >> "$out/summary.txt"
fi
if step table; then
  capped 160 same-process-bf16-r16.txt python3 scripts/torch_gemm_same_process.py --dtype bf16 \
    --order shuffle --rounds 16 --json "$out/same-process-bf16-r16.json"
  cut -c1-150 "$out/same-process-bf16-r16.txt" >> "$out/summary.txt"
fi
pack
