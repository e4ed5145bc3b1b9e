#!/usr/bin/env bash
# One device call: checks and measurements of the foundation on however many GPUs the machine has.
# Binaries come from build/ (built on the CPU machine). Logs and JSON go to $OUT (or out/).
set -uo pipefail
# Everything is written to a work folder, then packed into $OUT (the device tool returns at most
# 8 files): logs.tar.gz plus the summary and the collective table.
final="${OUT:-out}"; out=$(mktemp -d); mkdir -p "$final"
source scripts/device_env.sh
kiln=build/kiln
gpus=$(nvidia-smi -L | grep -c '^GPU')
{
  nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
  echo "gpus=$gpus"; $kiln --version
} 2>&1 | tee "$out/device.txt"

step() { echo "== $*" | tee -a "$out/summary.txt"; }

step "probe"
$kiln probe --json "$out/probe.json" 2>&1 | tee "$out/probe.txt"

step "GPU tests (collectives vs host simulation)"
build/kiln_gpu_tests 2>&1 | tail -25 | tee "$out/gpu_tests.txt"
build/kiln_cpu_tests --gtest_brief=1 2>&1 | tail -3 | tee -a "$out/gpu_tests.txt"

step "usage errors on a GPU host"
for args in "-g $((gpus + 5)) -b 1M -e 1M" "-g 1 -b 0" "-g 1 -o gather"; do
  $kiln bench collective $args 2>&1 | tee -a "$out/usage.txt"; echo "exit=$?" | tee -a "$out/usage.txt"
done

step "collective bench, every op, $gpus GPU(s)"
for op in allreduce reducescatter allgather alltoall broadcast reduce sendrecv; do
  $kiln bench collective -g "$gpus" -o "$op" -d bf16 -b 1M -e 1G -f 4 -w 5 -n 20 -c 1 \
    --json "$out/collective-$op-g$gpus.json" 2>&1 | tee -a "$out/collective.txt"
done

if [ "$gpus" -ge 2 ]; then
  step "NCCL through PyTorch at 1 GiB (reference for busbw)"
  python3 scripts/torch_collective_reference.py --gpus "$gpus" --bytes 1G --json "$out/torch-g$gpus.json" 2>&1 \
    | grep -v Warning | tee "$out/torch.txt"
  step "watchdog: rank 1 stops calling collectives (timeout 10 s)"
  start=$(date +%s)
  $kiln bench collective -g "$gpus" -b 1M -e 1M --timeout 10 --debug-hang-rank 1 2>&1 | tee "$out/watchdog.txt"
  echo "exit=$? after $(( $(date +%s) - start )) s" | tee -a "$out/watchdog.txt"
  step "kill -9 of one rank during a long run"
  $kiln bench collective -g "$gpus" -b 256M -e 256M -n 100000 --timeout 30 > "$out/kill.txt" 2>&1 &
  launcher=$!
  sleep 15
  victim=$(pgrep -P "$launcher" | sed -n 2p)
  echo "killing rank pid $victim at $(date +%s)" | tee -a "$out/kill.txt"
  kill -9 "$victim"
  wait "$launcher"; echo "exit=$? at $(date +%s)" | tee -a "$out/kill.txt"
fi

step "compute-sanitizer (memcheck, racecheck, synccheck) on the fill/check kernels, 1 rank"
for tool in memcheck racecheck synccheck; do
  compute-sanitizer --tool "$tool" --target-processes all --report-api-errors no --error-exitcode 3 \
    $kiln bench collective -g 1 -o allgather -d bf16 -b 4K -e 64K -f 4 -w 1 -n 2 -c 1 > "$out/sanitizer-$tool.txt" 2>&1
  echo "$tool exit=$? $(grep -E 'ERROR SUMMARY' "$out/sanitizer-$tool.txt" | sort | uniq -c | tr '\n' ' ')" | tee -a "$out/summary.txt"
done
step "done"
tar czf "$final/logs.tar.gz" -C "$out" .
cp "$out/summary.txt" "$out/collective.txt" "$final/"
