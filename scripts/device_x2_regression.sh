#!/usr/bin/env bash
# Issue 24 in one short call on 2xH200 (nvidia-h200-x2): the multi-rank GPU tests, then GEMM+RS
# and GEMM+AR with the tuner's plans (--plan auto, no sweep) and PyTorch's serial and async-TP in
# the same call, each step under its own time limit so that a budget cut still returns the
# earlier ones. Outputs go straight to $OUT/x2/ (summary.txt first).
# Last, scripts/alternate_kiln_torch.py: kiln and PyTorch taking turns (ALTERNATE=0 skips it).
# Usage: bash scripts/device_x2_regression.sh   (env TEST_LIMIT, BENCH_LIMIT, TORCH_LIMIT,
#        ALTERNATE_LIMIT in s; ALTERNATE_ROUNDS)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/device_env.sh >/dev/null
out="${OUT:-out}/x2"; mkdir -p "$out"
note() { echo "$*" | tee -a "$out/summary.txt"; }
run() {  # run LIMIT LOG COMMAND...: output to $out/LOG, exit code and seconds noted
  local limit=$1 log=$2; shift 2
  local start=$SECONDS
  timeout "$limit" "$@" > "$out/$log" 2>&1
  note "$log: exit $? in $((SECONDS - start)) s"
}
note "device: $(nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tr '\n' ';')"
note "topology: $(nvidia-smi topo -m 2>/dev/null | head -3 | tr '\n' ';')"
run "${TEST_LIMIT:-200}" tests.txt build/kiln_gpu_tests \
  --gtest_filter='*TwoRanks*:CandidateGpu.*:SuiteGpu.*:WatchdogGpu.*:AutomaticPlanGpu.*:TunerGpu.*'
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|^\[  SKIPPED|tests ran" "$out/tests.txt" | tee -a "$out/summary.txt"
run "${BENCH_LIMIT:-120}" rs-g2.txt build/kiln overlap bench -g 2 --op rs --plan auto --json "$out/rs-g2.json"
grep -v "^#   group" "$out/rs-g2.txt" | grep -E "^ +[0-9]+x|shape|^# kiln" | tee -a "$out/summary.txt"
run "${TORCH_LIMIT:-100}" torch.txt python3 scripts/torch_async_tp.py --gpus 2 --json "$out/torch-async-tp-g2.json"
tail -n 8 "$out/torch.txt" | tee -a "$out/summary.txt"
run "${BENCH_LIMIT:-120}" ar-g2.txt build/kiln overlap bench -g 2 --op ar --plan auto --json "$out/ar-g2.json"
grep -v "^#   group" "$out/ar-g2.txt" | grep -E "^ +[0-9]+x|shape|^# kiln" | tee -a "$out/summary.txt"
# Kiln's serial and overlap against PyTorch's serial and async-TP, the processes taking turns.
if [ "${ALTERNATE:-1}" = 1 ]; then
  run "${ALTERNATE_LIMIT:-420}" alternate.txt python3 scripts/alternate_kiln_torch.py --gpus 2 \
    --rounds "${ALTERNATE_ROUNDS:-3}" --json "$out/alternate.json"
  tail -n 8 "$out/alternate.txt" | tee -a "$out/summary.txt"
fi
