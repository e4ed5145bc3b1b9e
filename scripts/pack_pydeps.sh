#!/usr/bin/env bash
# Fills .pydeps/ (git-ignored) with what `pip install .` needs on a machine without a package index
# (the device machines): the build backend's wheels (scikit-build-core, its requirements, cmake and
# ninja, for pip's isolated build), CUTLASS's headers (from .deps/, which scripts/setup.sh fetched), and the
# Debian packages of fmt and nlohmann-json (headers and CMake configs, unpacked with dpkg -x there).
# Name .pydeps in a device call's carry; scripts/device_torch_ops.sh uses it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mkdir -p .pydeps
cutlass=$(ls -d .deps/cutlass-*/include | head -1)
[ -n "$cutlass" ] || { echo "pack_pydeps: no CUTLASS headers under .deps/ (run scripts/setup.sh)" >&2; exit 2; }
tar -cJf .pydeps/cutlass-include.tar.xz "$cutlass"
(cd .pydeps && apt-get download libfmt-dev libfmt9 nlohmann-json3-dev)
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform any -d .pydeps \
  scikit-build-core packaging pathspec cmake ninja
ls -l .pydeps
