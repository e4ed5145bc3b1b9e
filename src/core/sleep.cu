#include "core/cuda_check.hpp"
#include "core/sleep.hpp"

namespace kiln::core {
namespace {

__global__ void sleep_kernel(std::uint64_t nanoseconds) {
  std::uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    __nanosleep(2000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
}

}  // namespace

void enqueue_sleep(std::uint64_t nanoseconds, cudaStream_t stream) {
  if (nanoseconds == 0) return;
  sleep_kernel<<<1, 1, 0, stream>>>(nanoseconds);
  KILN_CUDA_CHECK(cudaGetLastError());
}

}  // namespace kiln::core
