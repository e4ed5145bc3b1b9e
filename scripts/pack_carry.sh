#!/usr/bin/env bash
# Packs build outputs for a device call: each named file (a path under the repository root) is
# xz-compressed into carry/ (git-ignored) as carry/<path with "/" written "__">.xz, which
# scripts/unpack_carry.sh restores on the device. Compressed, kiln's binaries fit the 64 MiB carry
# several times over (20 MB -> 3 MB). Run from anywhere; nothing else in carry/ is kept.
# A folder is packed as one tar.xz (restored in place).
# Usage: bash scripts/pack_carry.sh build/kiln build/kiln_gpu_tests [build-before/kiln ...]
#        [.deps/cutlass-4.2.0.0/include]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[ $# -gt 0 ] || { echo "usage: $0 PATH [PATH ...] (built files under the repository root)" >&2; exit 2; }
for path in "$@"; do
  [ -e "$path" ] || { echo "pack_carry: $path: no such file or folder (build it first)" >&2; exit 2; }
done
rm -rf carry && mkdir carry
for path in "$@"; do
  if [ -d "$path" ]; then  # a folder (e.g. .deps/cutlass-*/include for generated matmul kernels)
    tar -cf - "$path" | xz -T2 -6 > "carry/dir__${path//\//__}.tar.xz"  # never a dotfile
  else
    xz -T2 -6 -c "$path" > "carry/${path//\//__}.xz"
  fi
done
# What was packed, from which tree: the device scripts print it, so a call that carried binaries
# older than the change it means to measure says so.
{
  echo "packed $(date -u +%FT%TZ) at $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src apps problems include 2> /dev/null || echo ' (uncommitted changes)')"
  for path in "$@"; do echo "  $path $(date -u -r "$path" +%FT%TZ)"; done
  newer=$(find src apps problems include -newer "$1" -name '*.[ch]pp' 2> /dev/null | head -3)
  [ -z "$newer" ] || echo "  WARNING: sources newer than $1 (not rebuilt?): $newer"
} > carry/MANIFEST
cat carry/MANIFEST
ls -l carry
