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
ls -l carry
