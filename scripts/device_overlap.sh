#!/usr/bin/env bash
# Device run for the overlap runtime (issue 3): GPU tests, the signaling GEMM vs cuBLAS with the
# reorder overhead, GEMM+RS and GEMM+AR on every GPU of the machine with the plan sweep,
# PyTorch's async-TP, compute-sanitizer on a small shape. Binaries come prebuilt in build/.
# Writes logs and JSON into /tmp/kiln-overlap/overlap/ and packs them, after every step, as
# $OUT/overlap.tar.gz (the device tool returns at most 8 files; a killed run still returns the pack). Usage on the device machine: bash scripts/device_overlap.sh [steps]
# steps: any of tests gemm rs ar torch sanitizer (default: all).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/device_env.sh
steps=${*:-tests gemm rs ar torch sanitizer}
out=/tmp/kiln-overlap/overlap; rm -rf "$out"; mkdir -p "$out"
pack() { tar -czf "${OUT:-out}/overlap.tar.gz" -C "$(dirname "$out")" overlap; }
gpus=$(nvidia-smi -L | wc -l)
{ nvidia-smi; nvidia-smi topo -m; } > "$out/device.txt" 2>&1
k=build/kiln
# Clocks, power and temperature every second beside the whole run: the GEMM figures depend on them.
nvidia-smi dmon -s pct -o T > "$out/dmon.txt" 2>&1 &
dmon=$!
trap 'kill $dmon 2>/dev/null' EXIT
step() { pack; [[ " $steps " == *" $1 "* ]]; }
run() { echo "+ $*"; "$@"; echo "exit $?"; }
step tests && run timeout 150 build/kiln_gpu_tests --gtest_filter='OverlapGpu.*' > "$out/gpu_tests.txt" 2>&1
step tests && tail -n 25 "$out/gpu_tests.txt"
step gemm && run timeout 120 $k overlap gemm --json "$out/gemm.json" 2>&1 | tee "$out/gemm.txt"
step rs && run timeout 300 $k overlap bench -g "$gpus" --op rs --json "$out/rs-g$gpus.json" 2>&1 | tee "$out/rs-g$gpus.txt" | grep -v "^#   group"
step ar && run timeout 280 $k overlap bench -g "$gpus" --op ar --json "$out/ar-g$gpus.json" 2>&1 | tee "$out/ar-g$gpus.txt" | grep -v "^#   group"
step torch && [ "$gpus" -gt 1 ] && run timeout 100 python3 scripts/torch_async_tp.py --gpus "$gpus" --json "$out/torch-async-tp-g$gpus.json" > "$out/torch.txt" 2>&1; step torch && tail -n 8 "$out/torch.txt"
if step sanitizer; then
  # SANITIZE: plan variants to check (default: both signal modes and the copy-engine transport).
  for variant in ${SANITIZE:-signal=eager signal=deferred comm=ce}; do
    for tool in memcheck racecheck synccheck; do
      run timeout 60 compute-sanitizer --tool $tool --report-api-errors no $k overlap bench -g 1 --op ar \
        --shape 512x512x256 --plan "tile=128x128 cap=4 $variant groups=each" -w 1 -n 2 --rounds 1 \
        > "$out/sanitizer-$tool-${variant#*=}.txt" 2>&1
      tail -n 2 "$out/sanitizer-$tool-${variant#*=}.txt"
    done
  done
fi
pack
