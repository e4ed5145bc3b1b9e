#!/usr/bin/env bash
# Call 5 of 2026-11-30h (issue 17), one H200, binaries of call 1: is the remaining cycle gap kiln's
# epilogue or CUTLASS's ping-pong main loop? `kiln overlap gemm` times, in interleaved rounds, each
# shape's best schedule of the given configurations as kiln's GEMM without signal, with eager and
# deferred signal, and as its CUTLASS twin (the same main loop with CUTLASS's own epilogue), beside
# kiln's cuBLAS baseline. Carry ["carry"] (build/kiln).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null
mkdir -p "${OUT:-out}"
for c in "tile=128x176 cluster=2x1 kernel=pingpong" "tile=128x160 cluster=1x2 kernel=pingpong" \
         "tile=128x192 cluster=2x1 kernel=pingpong"; do
  name=$(echo "$c" | sed 's/tile=//; s/ cluster=/-/; s/ kernel=/-/')
  timeout 150 build/kiln overlap gemm --shape 16384x16384x2048 --shape 4096x8192x2048 \
    --shape 8192x8192x8192 --config "$c" --caps 132 --rounds 6 -n 20 \
    --json "${OUT:-out}/overlap-gemm-$name.json" > "${OUT:-out}/overlap-gemm-$name.txt" 2>&1
  echo "$c: exit $?"; cut -c1-150 "${OUT:-out}/overlap-gemm-$name.txt"
done
