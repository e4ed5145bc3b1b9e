#!/usr/bin/env bash
# One device call: the collective bench on every GPU of the machine for the four main collectives,
# with the default non-blocking communicator and with --nccl-blocking, beside NCCL through PyTorch
# at 1 MiB and 1 GiB. Results are packed into $OUT (logs.tar.gz + table.txt).
set -uo pipefail
final="${OUT:-out}"; out=$(mktemp -d); mkdir -p "$final"
source scripts/device_env.sh
kiln=build/kiln
gpus=$(nvidia-smi -L | grep -c '^GPU')
{ nvidia-smi -L; $kiln --version; } | tee "$out/device.txt"
build/kiln_gpu_tests 2>&1 | tail -6 | tee "$out/gpu_tests.txt"
for op in allreduce reducescatter allgather alltoall; do
  for mode in nonblocking blocking; do
    flag=""; [ "$mode" = blocking ] && flag="--nccl-blocking"
    $kiln bench collective -g "$gpus" -o "$op" -d bf16 -b 64K -e 1G -f 4 -w 10 -n 50 -c 1 $flag \
      --json "$out/collective-$op-g$gpus-$mode.json" 2>&1 | tee -a "$out/table.txt"
  done
done
for size in 1M 1G; do
  python3 scripts/torch_collective_reference.py --gpus "$gpus" --bytes "$size" --warmup 10 --iters 50 \
    --json "$out/torch-g$gpus-$size.json" 2>&1 | grep -v Warning | tee -a "$out/table.txt"
done
tar czf "$final/logs.tar.gz" -C "$out" .
cp "$out/table.txt" "$final/"
