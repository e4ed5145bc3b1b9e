#!/usr/bin/env bash
# Device run for issue 22: kiln's PyTorch package on one GPU. Steps:
#   install  `pip install .` from this tree (offline: the build backend's wheels, CUTLASS's headers
#            and fmt/nlohmann-json's Debian packages carried in .pydeps/, see scripts/pack_pydeps.sh);
#            pip's isolated build first, --no-build-isolation if that fails; the installed package
#            is packed into $OUT as kiln-installed.tar.gz
#   reuse    install that package from .pydeps/kiln-installed.tar.gz (a previous call's) instead,
#            with this tree's Python files over it (for changes that leave the C++ untouched)
#   tests    pytest python/tests: worlds of 1, 2 and 4 ranks on the one GPU (PYTEST_LIMIT s, 500)
#   bench    python -m kiln.bench on BENCH_SHAPES, world 1 and 2 ranks sharing the GPU
# Writes /tmp/kiln-torch-ops/t/ and packs it as $OUT/torch-ops.tar.gz.
# Usage: bash scripts/device_torch_ops.sh [install|reuse] [tests] [bench]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
steps=${*:-install tests}
out=/tmp/kiln-torch-ops/t; rm -rf "$out"; mkdir -p "$out"
archive=torch-ops
source scripts/device_steps.sh
note "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); python $(python3 -c 'import sys, torch; print(sys.version.split()[0], torch.__version__)')"
site=$(python3 -c 'import site; print(site.getsitepackages()[0])')

if step install; then
  note "system fmt/nlohmann-json headers: $(ls -d /usr/include/fmt /usr/include/nlohmann 2>/dev/null | tr '\n' ' ')"
  mkdir -p /tmp/deps
  for deb in .pydeps/*.deb; do dpkg -x "$deb" /tmp/deps; done
  python3 -c 'import tarfile; tarfile.open(".pydeps/cutlass-include.tar.xz").extractall(".")'
  export CMAKE_PREFIX_PATH=/tmp/deps/usr CMAKE_BUILD_PARALLEL_LEVEL=$(nproc)
  note "git status of the tree pip builds (clean apart from the carried .pydeps/ and .deps/):"
  git status --short 2>&1 | head -20 | tee -a "$out/summary.txt"
  if PIP_NO_INDEX=1 PIP_FIND_LINKS="$PWD/.pydeps" timed 480 pip-install.txt python3 -m pip install -v .; then
    note "pip install . (isolated build): ok"
  else
    tail -30 "$out/pip-install.txt" >> "$out/summary.txt"
    timed 480 pip-install-no-isolation.txt python3 -m pip install -v --no-build-isolation . &&
      note "pip install --no-build-isolation .: ok"
  fi
  grep -E "Building|Linking|error|Successfully" "$out"/pip-install*.txt | tail -15 >> "$out/summary.txt"
  note "linker flags in the environment: LDFLAGS=${LDFLAGS:-} CXXFLAGS=${CXXFLAGS:-}"
  objdump -p "$site/kiln/_kiln_ops.so" | grep NEEDED | tr -s ' ' | tr '\n' ' ' | tee -a "$out/summary.txt"; echo >> "$out/summary.txt"
  (cd /tmp && python3 -c 'import kiln, torch; print("import kiln:", kiln.__file__, torch.ops.kiln.fused_matmul_reduce_scatter.default._schema)') 2>&1 | tee -a "$out/summary.txt"
  tar -czf "$final/kiln-installed.tar.gz" -C "$site" kiln
fi

if step reuse; then
  tar -xzf .pydeps/kiln-installed.tar.gz -C "$site" && cp python/kiln/*.py "$site/kiln/" &&
    note "installed the package built by an earlier call, with this tree's Python files"
fi

if step tests; then
  (cd /tmp && timed "${PYTEST_LIMIT:-500}" pytest.txt python3 -m pytest -q -s -rA -p no:cacheprovider "$OLDPWD/python/tests")
  grep -E "passed|failed|PASSED|FAILED|ERROR|Error" "$out/pytest.txt" | tail -40 >> "$out/summary.txt"
fi

if step bench; then
  args=(); for s in ${BENCH_SHAPES:-8192x8192x8192 4096x8192x2048}; do args+=(--shape "$s"); done
  (cd /tmp && timed 240 bench-world1.txt python3 -m kiln.bench "${args[@]}" --nproc 1 --json "$out/bench-world1.json")
  cat "$out/bench-world1.txt" >> "$out/summary.txt"
  (cd /tmp && timed 240 bench-2ranks-shared.txt python3 -m kiln.bench --shape 2048x4096x1024 --nproc 2 --rounds 2 --json "$out/bench-2ranks-shared.json")
  cat "$out/bench-2ranks-shared.txt" >> "$out/summary.txt"
fi
pack
