#!/usr/bin/env bash
# One device call: the collective bench on every GPU of the machine for the four main collectives,
# with the default communicator (non-blocking init, blocking split) and with --nccl-nonblocking,
# beside NCCL through PyTorch at 1 MiB and 1 GiB; then the watchdog and kill -9 checks.
# Results are packed into $OUT (logs.tar.gz + table.txt).
set -uo pipefail
final="${OUT:-out}"; out=$(mktemp -d); mkdir -p "$final"
source scripts/device_env.sh
kiln=build/kiln
gpus=$(nvidia-smi -L | grep -c '^GPU')
{ nvidia-smi -L; $kiln --version; } | tee "$out/device.txt"
build/kiln_gpu_tests 2>&1 | grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) +\]|timed out|wrong" | tee "$out/gpu_tests.txt"
echo "== issue 2 acceptance command" | tee -a "$out/table.txt"
$kiln bench collective -g "$gpus" -o allreduce -b 1M -e 1G -f 4 -c 1 --json "$out/acceptance-allreduce-g$gpus.json" \
  2>&1 | tee -a "$out/table.txt"
echo "== wrong flags (each: one line, exit 2)" | tee -a "$out/table.txt"
for args in "-g 1 -b 0" "-g 1 -b 1M -e 1K" "-g $((gpus + 5)) -b 1M -e 1M" "-g 1 -o gather"; do
  $kiln bench collective $args 2>&1 | tee -a "$out/table.txt"; echo "exit=${PIPESTATUS[0]}" | tee -a "$out/table.txt"
done
for op in allreduce reducescatter allgather alltoall; do
  for mode in default nonblocking; do
    flag=""; [ "$mode" = nonblocking ] && flag="--nccl-nonblocking"
    $kiln bench collective -g "$gpus" -o "$op" -d bf16 -b 64K -e 1G -f 4 -w 10 -n 50 -c 1 $flag \
      --json "$out/collective-$op-g$gpus-$mode.json" 2>&1 | tee -a "$out/table.txt"
  done
done
for size in 1M 1G; do
  python3 scripts/torch_collective_reference.py --gpus "$gpus" --bytes "$size" --warmup 10 --iters 50 \
    --json "$out/torch-g$gpus-$size.json" 2>&1 | grep -v Warning | tee -a "$out/table.txt"
done
if [ "$gpus" -ge 2 ]; then
  echo "== watchdog: rank 1 stops calling collectives (timeout 10 s)" | tee -a "$out/table.txt"
  start=$(date +%s)
  $kiln bench collective -g "$gpus" -b 1M -e 1M --timeout 10 --debug-hang-rank 1 2>&1 | grep -v "^#" | tee -a "$out/table.txt"
  echo "exit=$? after $(( $(date +%s) - start )) s" | tee -a "$out/table.txt"
  echo "== kill -9 of rank 1 during a long run" | tee -a "$out/table.txt"
  $kiln bench collective -g "$gpus" -b 256M -e 256M -n 100000 --timeout 30 > "$out/kill.txt" 2>&1 &
  launcher=$!
  sleep 12
  victim=$(pgrep -P "$launcher" | sed -n 2p)
  killed_at=$(date +%s.%N)
  kill -9 "$victim"
  wait "$launcher"; code=$?
  grep -v "^#" "$out/kill.txt" | tee -a "$out/table.txt"
  echo "exit=$code, $(awk "BEGIN{print $(date +%s.%N) - $killed_at}") s after the kill" | tee -a "$out/table.txt"
fi
tar czf "$final/logs.tar.gz" -C "$out" .
cp "$out/table.txt" "$final/"
