// The judge's span fingerprints on the device (see judge_guards.hpp).
#include "bench/judge_guards.hpp"

#include <algorithm>

#include "core/cuda_check.hpp"
#include "core/test_values.hpp"

namespace kiln::bench {
namespace {

constexpr int kThreads = 256;

int blocks_for(std::uint64_t words) {
  const std::uint64_t wanted = (words + kThreads - 1) / kThreads;
  return static_cast<int>(std::clamp<std::uint64_t>(wanted, 1, 4096));
}

// Sum over 8-byte words of mix64(salt ^ position ^ word); the tail bytes form a last word.
__global__ void hash_span(const unsigned char* data, std::uint64_t bytes, std::uint64_t salt,
                          unsigned long long* result) {
  const std::uint64_t words = bytes / 8;
  std::uint64_t sum = 0;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
       i < words; i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t word = reinterpret_cast<const std::uint64_t*>(data)[i];
    sum += core::mix64(salt ^ core::mix64(i) ^ word);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0 && bytes % 8 != 0) {
    std::uint64_t tail = 0;
    for (std::uint64_t b = words * 8; b < bytes; ++b) tail = (tail << 8) | data[b];
    sum += core::mix64(salt ^ core::mix64(words) ^ tail ^ 0xA5A5u);
  }
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if ((threadIdx.x & 31) == 0) atomicAdd(result, static_cast<unsigned long long>(sum));
}

}  // namespace

void enqueue_span_hash(const std::vector<DeviceSpan>& spans, std::uint64_t* result,
                       cudaStream_t stream) {
  KILN_CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof(std::uint64_t), stream));
  for (std::size_t s = 0; s < spans.size(); ++s) {
    if (spans[s].bytes == 0) continue;
    // 8-byte words need 8-byte alignment; kiln's buffers come from cudaMalloc (256-byte).
    KILN_REQUIRE(reinterpret_cast<std::uintptr_t>(spans[s].data) % 8 == 0,
                 "span_hash: span not 8-byte aligned");
    hash_span<<<blocks_for(spans[s].bytes / 8), kThreads, 0, stream>>>(
        static_cast<const unsigned char*>(spans[s].data), spans[s].bytes, core::mix64(s + 1),
        reinterpret_cast<unsigned long long*>(result));
    KILN_CUDA_CHECK(cudaGetLastError());
  }
}

SpanHashes::SpanHashes(int slots) : slots_(slots) {
  KILN_CUDA_CHECK(cudaMalloc(&device_, sizeof(std::uint64_t) * slots_));
}
SpanHashes::~SpanHashes() {
  cudaFree(device_);
}
void SpanHashes::enqueue(int slot, const std::vector<DeviceSpan>& spans, cudaStream_t stream) {
  KILN_REQUIRE(slot >= 0 && slot < slots_, "SpanHashes: slot out of range");
  enqueue_span_hash(spans, device_ + slot, stream);
}
std::uint64_t SpanHashes::read(int slot) const {
  std::uint64_t value = 0;
  KILN_CUDA_CHECK(cudaMemcpy(&value, device_ + slot, sizeof(value), cudaMemcpyDeviceToHost));
  return value;
}

}  // namespace kiln::bench
