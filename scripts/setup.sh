#!/usr/bin/env bash
# Installs everything kiln needs on a fresh Debian machine with the CUDA toolkit, then builds it.
# Idempotent: a second run installs nothing and rebuilds only what changed.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

CUTLASS_VERSION=4.2.0.0  # pinned; CMakeLists.txt looks for exactly this folder
[ -d /usr/local/cuda/bin ] && export PATH="/usr/local/cuda/bin:$PATH"
command -v nvcc >/dev/null || { echo "setup: nvcc not found; install the CUDA 13 toolkit" >&2; exit 1; }

packages=(cmake ninja-build g++ unzip ccache libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev)
# Only when there is no python3 with pip at all (it may come from pyenv rather than apt).
python3 -m pip --version >/dev/null 2>&1 || packages+=(python3 python3-pip)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cutlass_dir=".deps/cutlass-$CUTLASS_VERSION"
if [ ! -f "$cutlass_dir/include/cutlass/cutlass.h" ]; then
  echo "setup: fetching CUTLASS/CuTe $CUTLASS_VERSION headers (PyPI nvidia-cutlass)"
  download=$(mktemp -d)
  python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$download" "nvidia-cutlass==$CUTLASS_VERSION"
  rm -rf "$cutlass_dir.partial" && mkdir -p "$cutlass_dir.partial"
  unzip -q "$download"/nvidia_cutlass-*.whl 'cutlass_library/source/include/*' -d "$download/x"
  mv "$download/x/cutlass_library/source/include" "$cutlass_dir.partial/include"
  rm -rf "$cutlass_dir" && mv "$cutlass_dir.partial" "$cutlass_dir"
  rm -rf "$download"
fi

# Optional (KILN_SASS_TOOLS=1): cuobjdump and nvdisasm, which this toolkit install may lack, from
# NVIDIA's CUDA 13 PyPI wheels. scripts/probe_gemm_registers.sh reads the GEMM kernels' SASS with
# them (uniform-register use of the k-loop, docs/results/2026-11-30i-uniform-epilogue/).
sass_dir=".deps/cuda-sass-tools"
if [ "${KILN_SASS_TOOLS:-0}" = 1 ] && [ ! -x "$sass_dir/bin/nvdisasm" ]; then
  echo "setup: fetching cuobjdump and nvdisasm (PyPI nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm)"
  download=$(mktemp -d)
  python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$download" \
    "nvidia-cuda-cuobjdump==13.*" "nvidia-cuda-nvdisasm==13.*"
  for wheel in "$download"/*.whl; do unzip -qo "$wheel" 'nvidia/cu13/bin/*' -d "$download/x"; done
  rm -rf "$sass_dir" && mkdir -p "$sass_dir"
  mv "$download/x/nvidia/cu13/bin" "$sass_dir/bin" && chmod +x "$sass_dir"/bin/*
  rm -rf "$download"
fi

build_dir="${KILN_BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build_dir" -j "${KILN_BUILD_JOBS:-2}"
echo "setup: built $build_dir/kiln"
