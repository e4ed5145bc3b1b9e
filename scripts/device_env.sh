# Sourced on a device machine before running binaries built on the CPU machine: makes the CUDA
# libraries they link (cuBLAS, NCCL) findable when the image keeps them only in Python packages,
# and keeps NVLink multicast off as the shared machines require.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
kiln_bin="${KILN_BUILD_DIR:-build}/kiln"
# A call that carries only a library (e.g. the GEMM C API) has no kiln binary to ask: add the
# paths then too (harmless where the libraries are found anyway).
if [ ! -e "$kiln_bin" ] || ldd "$kiln_bin" 2>/dev/null | grep -q "not found"; then
  site=$(python3 -c 'import site; print(site.getsitepackages()[0])' 2>/dev/null || true)
  for lib in cublas nccl cuda_runtime cuda_nvrtc; do
    [ -d "$site/nvidia/$lib/lib" ] && LD_LIBRARY_PATH="$site/nvidia/$lib/lib:${LD_LIBRARY_PATH:-}"
  done
  for dir in /usr/local/cuda/lib64 /usr/local/cuda/lib; do
    [ -d "$dir" ] && LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:$dir"
  done
  export LD_LIBRARY_PATH
fi
if [ -e "$kiln_bin" ]; then ldd "$kiln_bin" | grep -E "cublas|nccl|not found" || true; fi
