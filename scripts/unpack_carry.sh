#!/usr/bin/env bash
# Device side of scripts/pack_carry.sh: restores every carry/*.xz to its path (xz, else Python's
# lzma) and makes it executable. Run from the repository root or anywhere.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
shopt -s nullglob
[ -f carry/MANIFEST ] && sed 's/^/carry: /' carry/MANIFEST
for packed in carry/*.tar.xz; do
  if command -v xz >/dev/null; then xz -dc "$packed" | tar -xf -; else
    python3 -c 'import tarfile,sys; tarfile.open(sys.argv[1], "r:xz").extractall(".")' "$packed"
  fi
  echo "unpacked $(basename "$packed" .tar.xz | sed -e 's/^dir__//' -e 's/__/\//g')/"
done
for packed in carry/*.xz; do
  case $packed in *.tar.xz) continue ;; esac
  name=$(basename "$packed" .xz); to=${name//__//}
  mkdir -p "$(dirname "$to")"
  if command -v xz >/dev/null; then xz -dc "$packed" > "$to"; else
    python3 -c 'import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2],"wb"))' "$packed" "$to"
  fi
  chmod +x "$to"
  echo "unpacked $to"
done
