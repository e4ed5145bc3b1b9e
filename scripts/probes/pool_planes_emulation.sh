#!/usr/bin/env bash
# Every sliding-planes configuration of both 3-D pooling problems (threads x rows x planes x
# outputs, 384 sources from `kiln evolve generate`) through the host transliteration
# pool_planes_emulation.cpp (no GPU). Prints one line per configuration; exits 1 on any failure.
# Usage: bash scripts/probes/pool_planes_emulation.sh   (after building build/kiln)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
w=$(mktemp -d); trap 'rm -rf "$w"' EXIT
g++ -std=c++17 -O2 -o "$w/emu" scripts/probes/pool_planes_emulation.cpp || exit 2
failed=0
for p in kb1-43-maxpool-3d kb1-46-avgpool-3d; do
  if [ $p = kb1-43-maxpool-3d ]; then window="3 2 1 3 1"; else window="3 2 1 1 0"; fi
  for t in 128 256 512; do for r in 2 4 8 16; do for pl in 4 8 16 32; do for u in 1 2 4 8; do
    f="$w/$p-$t-$r-$pl-$u.cu"
    build/kiln evolve generate --problem $p --genome "{\"family\":\"pooling\",\"strategies\":[\"scalar-loads\",\"sliding-planes\"],\"knobs\":{\"scalar-loads.unroll\":$u,\"sliding-planes.threads\":$t,\"sliding-planes.rows\":$r,\"sliding-planes.planes\":$pl}}" --out "$f" > /dev/null || { echo "not generated: $f"; failed=1; continue; }
    c() { grep -m1 -oP "$1 = \K[0-9]+" "$f"; }
    # shellcheck disable=SC2086
    "$w/emu" $window "$(c kThreads)" "$(c kRows)" "$(c kOutputs)" "$(c kPlanes)" "$(c kRowsIn)" "$(c kColsIn)" "$(c kLoads)" || failed=1
  done; done; done; done
done
exit $failed
