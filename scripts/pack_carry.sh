#!/usr/bin/env bash
# Packs build outputs for a device call: each named file (a path under the repository root) is
# xz-compressed into carry/ (git-ignored) as carry/<path with "/" written "__">.xz, which
# scripts/unpack_carry.sh restores on the device. Compressed, kiln's binaries fit the 64 MiB carry
# several times over (20 MB -> 3 MB). Run from anywhere; nothing else in carry/ is kept.
# Usage: bash scripts/pack_carry.sh build/kiln build/kiln_gpu_tests [build-before/kiln ...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[ $# -gt 0 ] || { echo "usage: $0 PATH [PATH ...] (built files under the repository root)" >&2; exit 2; }
for path in "$@"; do
  [ -f "$path" ] || { echo "pack_carry: $path: not a file (build it first)" >&2; exit 2; }
done
rm -rf carry && mkdir carry
for path in "$@"; do
  xz -T2 -6 -c "$path" > "carry/${path//\//__}.xz"
done
ls -l carry
