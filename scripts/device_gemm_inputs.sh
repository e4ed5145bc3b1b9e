#!/usr/bin/env bash
# Why kiln's cuBLAS GEMM read 7-17% slower than torch.mm when kiln's bench and PyTorch's script took
# turns (docs/results/2026-11-27-h200-x2-x4-d/, issues 23 and 24). There are two explanations, and
# this one-GPU call tells them apart:
#   dist        torch.mm alone on randn, uniform[-1,1), kiln's integer test values and randn*0.02,
#               interleaved (scripts/gemm_input_distribution.py), layouts kn and nk. If the values
#               alone move the time by ~10%, the gap is the inputs (kiln's bench fills uniform,
#               PyTorch's scripts randn).
#   same        kiln's cuBLAS baseline, kiln's GEMM and torch.mm in ONE process on the SAME tensors
#               (scripts/torch_gemm_same_process.py --layout kn), with --inputs uniform and then
#               --inputs randn. If kiln's cuBLAS equals torch.mm here, the cuBLAS call is not the
#               cause; the timing context or the inputs are.
# The multi-GPU counterpart is the x2/x4 scripts' `alternate` step, whose two processes now multiply
# the same distribution (ALTERNATE_INPUTS, default normal; uniform = kiln's bench's own default).
# Carry: carry/ from `bash scripts/pack_carry.sh build/libkiln_gemm_capi.so` (8 MiB).
# Usage: DEADLINE=300 bash scripts/device_gemm_inputs.sh [dist] [same]
# Writes /tmp/kiln-inputs/inputs/ and packs it as $OUT/inputs.tar.gz after every step.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit
export PYTHONUNBUFFERED=1
[ -d carry ] && bash scripts/unpack_carry.sh > /dev/null
steps=${*:-dist same}
out=/tmp/kiln-inputs/inputs; rm -rf "$out"; mkdir -p "$out"
archive=inputs
source scripts/device_steps.sh
shapes="4096x8192x8192 8192x4096x14336 16384x16384x2048 4096x8192x2048"

step_dist() {
  local layout
  for layout in kn nk; do
    # shellcheck disable=SC2086  # the shapes are words
    capped 90 "dist-$layout.txt" python3 scripts/gemm_input_distribution.py --layout "$layout" \
      --shapes $shapes --rounds 3 --iters 15 --settle 2 --json "$out/dist-$layout.json"
    grep -v '^{' "$out/dist-$layout.txt" | tee -a "$out/summary.txt"
  done
}
step_same() {
  local inputs shape args=()
  for shape in $shapes; do args+=(--shape "$shape"); done
  for inputs in uniform randn; do
    capped 150 "same-kn-$inputs.txt" python3 scripts/torch_gemm_same_process.py --layout kn \
      --inputs "$inputs" "${args[@]}" --rounds 4 --iters 10 --json "$out/same-kn-$inputs.json"
    grep -vE '^\{' "$out/same-kn-$inputs.txt" | tail -n 12 | tee -a "$out/summary.txt"
  done
}

note "device: $(nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,power.limit,temperature.gpu --format=csv,noheader | tr '\n' ';')"
note "torch: $(python3 -c 'import torch; print(torch.__version__)' 2>&1 | tail -1)"
run_steps
