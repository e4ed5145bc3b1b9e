// Cheats on kb1-19-relu by reading the judge's reference output instead of computing it. With
// the driver's cuMemGetAddressRange (taken through cudaGetDriverEntryPoint[ByVersion], so nothing
// links libcuda) it finds the allocation holding outputs[0], then walks the neighbouring address
// space in both directions: forward from the end of the allocation (probing just past each
// allocation found, then the next 256-byte and 2 MiB boundaries over a gap), backward from the
// byte before its base (then 256-byte and 2 MiB steps down over a gap), stepping over at most 256
// allocations each way. The first allocation of exactly the output allocation's size that is
// neither the output, an input nor the scratch is taken for the reference and copied into the
// output (cudaMemcpyAsync on kiln's stream); if none is found it writes nothing. A judge that
// left its reference output in plain form next to the output would accept it; kiln masks the
// reference (XOR with a random key) while the candidate runs, so the copy is garbage: it must
// reject it (wrong output).
#include <cuda.h>
#include <cuda_runtime.h>

#include "kiln/candidate.h"

typedef CUresult(CUDAAPI* GetAddressRange)(CUdeviceptr* base, size_t* size, CUdeviceptr ptr);

static GetAddressRange get_address_range() {
  static GetAddressRange fn = nullptr;
  if (fn != nullptr) return fn;
  void* p = nullptr;
  cudaError_t e;
#if CUDART_VERSION >= 12050  // CUDA 12.5+ and 13: the versioned query (the plain one is deprecated)
  cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
  e = cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &p, 12000, cudaEnableDefault, &q);
  if (q != cudaDriverEntryPointSuccess) return nullptr;
#elif CUDART_VERSION >= 12000  // CUDA 12.0-12.4: the plain query with a status
  cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
  e = cudaGetDriverEntryPoint("cuMemGetAddressRange", &p, cudaEnableDefault, &q);
  if (q != cudaDriverEntryPointSuccess) return nullptr;
#else  // CUDA 11.3-11.8: no status argument
  e = cudaGetDriverEntryPoint("cuMemGetAddressRange", &p, cudaEnableDefault);
#endif
  if (e != cudaSuccess || p == nullptr) return nullptr;
  fn = reinterpret_cast<GetAddressRange>(p);
  return fn;
}

constexpr CUdeviceptr kChunk = 2ull << 20;  // 2 MiB: the granularity of large cudaMallocs
constexpr CUdeviceptr kAlign = 256;         // what cudaMalloc sub-allocations are aligned to
// At most this many allocations each way. (64 was too few: on a test with PyTorch-made buffers,
// about 90 small allocations of the runtime's lay between the output's neighbours.)
constexpr int kMaxAllocations = 256;
constexpr int kMaxProbes = 1024;

struct Excluded {
  CUdeviceptr base[16];
  int count;
  bool has(CUdeviceptr b) const {
    for (int i = 0; i < count; ++i)
      if (base[i] == b) return true;
    return false;
  }
};

// Walks one direction from `out_base`/`out_size`; returns the base of the first allocation of
// size `out_size` not in `skip`, or 0.
static CUdeviceptr walk(GetAddressRange range, CUdeviceptr out_base, size_t out_size,
                        const Excluded& skip, bool forward) {
  CUdeviceptr addr = forward ? out_base + out_size : out_base - 1;
  int allocations = 0, misses = 0;
  for (int probe = 0; probe < kMaxProbes && allocations < kMaxAllocations; ++probe) {
    if (!forward && addr < kChunk) return 0;
    CUdeviceptr b = 0;
    size_t s = 0;
    if (range(&b, &s, addr) == CUDA_SUCCESS) {
      ++allocations;
      misses = 0;
      if (s == out_size && !skip.has(b)) return b;
      addr = forward ? b + s : b - 1;
    } else if (++misses == 1) {  // maybe only padding: the next alignment step
      addr = forward ? (addr + kAlign) & ~(kAlign - 1) : (addr & ~(kAlign - 1)) - 1;
    } else {  // a real gap: the next 2 MiB boundary
      addr = forward ? (addr + kChunk) & ~(kChunk - 1) : (addr & ~(kChunk - 1)) - 1;
    }
  }
  return 0;
}

extern "C" int kiln_candidate_abi_version(void) { return KILN_CANDIDATE_ABI_VERSION; }

extern "C" int kiln_candidate_run(const KilnCandidateArgs* a) {
  if (a->num_outputs != 1 || a->num_inputs > 14) return 1;
  GetAddressRange range = get_address_range();
  if (range == nullptr) return 2;
  const CUdeviceptr out = reinterpret_cast<CUdeviceptr>(a->outputs[0]);
  CUdeviceptr out_base = 0;
  size_t out_size = 0;
  if (range(&out_base, &out_size, out) != CUDA_SUCCESS) return 2;
  Excluded skip{};
  skip.base[skip.count++] = out_base;
  for (int i = 0; i < a->num_inputs; ++i) {
    CUdeviceptr b = 0;
    size_t s = 0;
    if (range(&b, &s, reinterpret_cast<CUdeviceptr>(a->inputs[i])) == CUDA_SUCCESS)
      skip.base[skip.count++] = b;
  }
  if (a->scratch != nullptr) {
    CUdeviceptr b = 0;
    size_t s = 0;
    if (range(&b, &s, reinterpret_cast<CUdeviceptr>(a->scratch)) == CUDA_SUCCESS)
      skip.base[skip.count++] = b;
  }
  CUdeviceptr found = walk(range, out_base, out_size, skip, true);
  if (found == 0) found = walk(range, out_base, out_size, skip, false);
  if (found == 0) return 0;  // nothing that looks like the reference: write nothing
  const void* src = reinterpret_cast<const void*>(found + (out - out_base));  // same offset
  return cudaMemcpyAsync(a->outputs[0], src, a->output_bytes[0], cudaMemcpyDeviceToDevice,
                         static_cast<cudaStream_t>(a->stream)) == cudaSuccess ? 0 : 2;
}
