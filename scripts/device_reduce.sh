#!/usr/bin/env bash
# Device run for the reduction kernels (issue 6): GPU tests, `kiln reduce bench` over the issue's
# sizes for several dtypes and operations (plus a misaligned start), compute-sanitizer on a small
# size. Binaries come prebuilt in build/. Writes logs and JSON into /tmp/kiln-reduce/reduce/ and
# packs them as $OUT/reduce.tar.gz after every step (a killed run still returns the pack).
# Usage on the device machine: bash scripts/device_reduce.sh [steps]; steps: tests bench ncu sanitizer.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/device_env.sh
steps=${*:-tests bench ncu sanitizer}
out=/tmp/kiln-reduce/reduce; rm -rf "$out"; mkdir -p "$out"
pack() { tar -czf "${OUT:-out}/reduce.tar.gz" -C "$(dirname "$out")" reduce; }
step() { pack; [[ " $steps " == *" $1 "* ]]; }
run() { echo "+ $*"; "$@"; echo "exit $?"; }
k=build/kiln
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
nvidia-smi -i "$CUDA_VISIBLE_DEVICES" > "$out/device.txt" 2>&1
nvidia-smi dmon -i "$CUDA_VISIBLE_DEVICES" -s pct -o T > "$out/dmon.txt" 2>&1 &
dmon=$!
trap 'kill $dmon 2>/dev/null' EXIT
step tests && run timeout 240 build/kiln_gpu_tests --gtest_filter='ReduceGpu.*' > "$out/gpu_tests.txt" 2>&1
step tests && grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED) |checks|got" "$out/gpu_tests.txt" | head -30
sizes=1e3,1e4,1e5,1e6,1e7,1e8,1e9,2e9
if step bench; then
  for case in "sum int32" "sum fp32" "sum bf16" "max int32" "min fp32"; do
    set -- $case
    run timeout 150 $k reduce bench --op "$1" -d "$2" --sizes "$sizes" --json "$out/reduce-$1-$2.json" \
      > "$out/reduce-$1-$2.txt" 2>&1
    grep -E "^ +(1000000000|2000000000) |correctness" "$out/reduce-$1-$2.txt"
  done
  run timeout 100 $k reduce bench --op sum -d int32 --sizes 1e3,1e6,1e9 --misalign 1 \
    --json "$out/reduce-sum-int32-misalign1.json" > "$out/reduce-sum-int32-misalign1.txt" 2>&1
  grep -E "^ +1000000000 |correctness" "$out/reduce-sum-int32-misalign1.txt"
fi
if step ncu; then
  run timeout 150 $k reduce bench --op sum -d int32 --sizes 1e8,1e9 -n 20 --ncu \
    --json "$out/reduce-sum-int32-ncu.json" > "$out/reduce-sum-int32-ncu.txt" 2>&1
  sed -n '/Nsight Compute/,$p' "$out/reduce-sum-int32-ncu.txt"
fi
if step sanitizer; then
  for tool in memcheck racecheck synccheck; do
    run timeout 120 compute-sanitizer --tool $tool $k reduce bench --op sum -d bf16 --sizes 1000,100003 \
      --misalign 3 -w 0 -n 2 > "$out/sanitizer-$tool.txt" 2>&1
    tail -n 2 "$out/sanitizer-$tool.txt"
  done
fi
pack
