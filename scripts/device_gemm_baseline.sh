#!/usr/bin/env bash
# Device run for issue 17: kiln's cuBLAS baseline (cublasLt, workspace, timed heuristic
# candidates) and kiln's signaling GEMM against torch.matmul on one GPU, alternated per shape
# and round in one call. Writes /tmp/kiln-gemm/g/ and packs it as $OUT/gemm.tar.gz.
# Usage: bash scripts/device_gemm_baseline.sh   (env ROUNDS=2, DTYPES="bf16 fp16", SHAPES=...,
#        SETTLE=seconds of sustained torch products before timing, TORCH_ITERS=50)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/device_env.sh >/dev/null
out=/tmp/kiln-gemm/g; rm -rf "$out"; mkdir -p "$out"
final="${OUT:-out}"; mkdir -p "$final"
pack() { tar -czf "$final/gemm.tar.gz" -C "$(dirname "$out")" g; }
shapes=${SHAPES:-"4096x8192x8192 8192x8192x8192 16384x8192x4096 8192x4096x14336 4096x8192x2048 16384x16384x2048 8192x8192x2048 8192x8192x7168 16384x4096x3584 5000x8192x8192 4096x7168x4096 1000x8192x8192"}
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader | tee "$out/device.txt"
for dtype in ${DTYPES:-bf16 fp16}; do
  for round in $(seq 1 "${ROUNDS:-2}"); do
    for s in $shapes; do
      build/kiln overlap gemm -d "$dtype" --shape "$s" --caps 128 --json "$out/kiln-$dtype-$s-r$round.json" \
        > "$out/kiln-$dtype-$s-r$round.txt" 2>&1
      python3 scripts/torch_matmul.py --dtype "$dtype" --shape "$s" --settle "${SETTLE:-0}" --iters "${TORCH_ITERS:-50}" --json "$out/torch-$dtype-$s-r$round.json" \
        > "$out/torch-$dtype-$s-r$round.txt" 2>&1
      python3 - "$out" "$dtype" "$s" "$round" <<'PY' | tee -a "$out/summary.txt"
import json, sys
out, dtype, s, r = sys.argv[1:]
k = json.load(open(f"{out}/kiln-{dtype}-{s}-r{r}.json"))["rows"][0]
t = json.load(open(f"{out}/torch-{dtype}-{s}-r{r}.json"))["rows"][0]
print(f"{dtype} r{r} {s:>18}  cublasLt {k['cublas_us']['median']:8.1f}  torch {t['torch_matmul_us']:8.1f}  "
      f"kiln {k['kiln_us']['median']:8.1f}  kiln+signal {k['kiln_with_signal_us']['median']:8.1f}  "
      f"base/torch {k['cublas_us']['median']/t['torch_matmul_us']:.3f}  sig/base {k['kiln_with_signal_us']['median']/k['cublas_us']['median']:.3f}  {k['cublas_algorithm']}")
PY
    done
    pack
  done
done
pack
