#!/usr/bin/env bash
# Sets everything up and runs kiln's main job. With GPUs: measure the machine's ceilings
# (kiln probe) and run the collective bench on all of them, JSON under out/. Without a GPU: show the
# hardware profiles and what the bench will measure, with the spec-sheet floors.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/setup.sh"
cd "$root"
kiln="${KILN_BUILD_DIR:-build}/kiln"
export NCCL_NVLS_ENABLE=0  # NVLink multicast stays off on shared machines (see docs/)
mkdir -p out

gpus=0
if command -v nvidia-smi >/dev/null 2>&1; then gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true); fi
if [ "$gpus" -eq 0 ]; then
  echo "== no GPU visible: hardware profiles and the plan of the collective bench =="
  "$kiln" profiles
  "$kiln" probe --show 2>/dev/null || echo "# (no cached probe; run this on a GPU machine to measure)"
  for op in allreduce reducescatter allgather alltoall; do
    "$kiln" bench collective --dry-run -g 4 -o "$op" -d bf16 -b 1M -e 1G -f 4 --device h200-sxm
  done
  exit 0
fi

echo "== $gpus GPU(s): probing ceilings =="
"$kiln" probe --json out/probe.json
for op in allreduce reducescatter allgather alltoall broadcast reduce sendrecv; do
  echo "== collective bench: $op on $gpus GPU(s) =="
  "$kiln" bench collective -g "$gpus" -o "$op" -d bf16 -b 1M -e 1G -f 4 -c 1 --json "out/collective-$op.json"
done
