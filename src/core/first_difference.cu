// First differing byte of two device buffers (see first_difference.hpp).
#include <algorithm>
#include <cstdint>
#include <limits>

#include "core/cuda_check.hpp"
#include "core/first_difference.hpp"

namespace kiln::core {
namespace {

constexpr unsigned long long kNone = std::numeric_limits<unsigned long long>::max();

// 16-byte words where both buffers allow it, bytes otherwise; every thread keeps its own first
// difference and one atomicMin per thread that found one publishes it.
__global__ void first_difference_kernel(const unsigned char* a, const unsigned char* b,
                                        std::size_t bytes, bool vectors,
                                        unsigned long long* result) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  unsigned long long found = kNone;
  std::size_t checked = 0;
  if (vectors) {
    const std::size_t words = bytes / 16;
    for (std::size_t w = first; w < words && found == kNone; w += stride) {
      const uint4 x = reinterpret_cast<const uint4*>(a)[w];
      const uint4 y = reinterpret_cast<const uint4*>(b)[w];
      if (x.x != y.x || x.y != y.y || x.z != y.z || x.w != y.w) {
        for (int i = 0; i < 16; ++i) {
          if (a[w * 16 + i] != b[w * 16 + i]) {
            found = w * 16 + i;
            break;
          }
        }
      }
    }
    checked = words * 16;
  }
  for (std::size_t i = checked + first; i < bytes && found == kNone; i += stride) {
    if (a[i] != b[i]) found = i;
  }
  if (found != kNone) atomicMin(result, found);
}

}  // namespace

DifferenceFinder::DifferenceFinder() : result_(sizeof(unsigned long long)) {}

std::optional<std::size_t> DifferenceFinder::first(const void* a, const void* b, std::size_t bytes,
                                                   cudaStream_t stream) {
  if (bytes == 0) return std::nullopt;
  auto* result = static_cast<unsigned long long*>(result_.data());
  KILN_CUDA_CHECK(cudaMemsetAsync(result, 0xff, sizeof(unsigned long long), stream));
  const bool vectors = reinterpret_cast<std::uintptr_t>(a) % 16 == 0 &&
                       reinterpret_cast<std::uintptr_t>(b) % 16 == 0;
  const std::size_t work = vectors ? bytes / 16 + 16 : bytes;
  const int blocks = static_cast<int>(std::min<std::size_t>(1024, (work + 255) / 256));
  first_difference_kernel<<<blocks, 256, 0, stream>>>(static_cast<const unsigned char*>(a),
                                                      static_cast<const unsigned char*>(b), bytes,
                                                      vectors, result);
  KILN_CUDA_CHECK_LAUNCH();
  unsigned long long host = kNone;
  KILN_CUDA_CHECK(cudaMemcpyAsync(&host, result, sizeof(host), cudaMemcpyDeviceToHost, stream));
  KILN_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (host == kNone) return std::nullopt;
  return static_cast<std::size_t>(host);
}

}  // namespace kiln::core
