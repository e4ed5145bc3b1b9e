// Stream timestamps (see timeline.hpp).
#include "core/cuda_check.hpp"
#include "overlap/timeline.hpp"

namespace kiln::overlap {
namespace {
__global__ void timestamp_kernel(unsigned long long* where) {
  unsigned long long now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  *where = now;
}
}  // namespace

void enqueue_timestamp(unsigned long long* where, cudaStream_t stream) {
  timestamp_kernel<<<1, 1, 0, stream>>>(where);
  KILN_CUDA_CHECK_LAUNCH();
}

}  // namespace kiln::overlap
