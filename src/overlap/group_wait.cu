// Counter waits on a stream (see group_wait.hpp).
#include <cuda.h>

#include <cstdio>
#include <string>

#include "core/cuda_check.hpp"
#include "core/driver_entry.hpp"
#include "core/error.hpp"
#include "core/stream.hpp"
#include "overlap/group_wait.hpp"

namespace kiln::overlap {
namespace {

// cuStreamWaitValue32 and cuStreamWriteValue32 through core::driver_function (no libcuda link).
using WaitValue32 = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

using WriteValue32 = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

WaitValue32 wait_value32() {
  static const auto function =
      reinterpret_cast<WaitValue32>(core::driver_function("cuStreamWaitValue32"));
  return function;
}

WriteValue32 write_value32() {
  static const auto function =
      reinterpret_cast<WriteValue32>(core::driver_function("cuStreamWriteValue32"));
  return function;
}

// Bounded (issue 18, defect 6): after `timeout_ns` it prints what it waited for and traps, so the
// stream reports an error instead of spinning forever.
__global__ void spin_until_kernel(const unsigned* counter, unsigned target,
                                  unsigned long long timeout_ns, int label) {
  unsigned long long start;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  for (;;) {
    unsigned value;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(value) : "l"(counter) : "memory");
    if (static_cast<int>(value - target) >= 0) return;
    __nanosleep(256);
    unsigned long long now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start > timeout_ns) {
      printf("kiln: counter wait %d timed out after %.0f s: counter %u, waiting for %u\n", label,
             static_cast<double>(timeout_ns) * 1e-9, value, target);
      __trap();
    }
  }
}

}  // namespace

void enqueue_value_write(unsigned* word, unsigned value, cudaStream_t stream) {
  core::check_driver(write_value32()(reinterpret_cast<CUstream>(stream),
                                     reinterpret_cast<CUdeviceptr>(word), value, 0),
                     "cuStreamWriteValue32");
}

const char* wait_method_name(WaitMethod method) {
  return method == WaitMethod::kStreamMemOp ? "stream-wait-value" : "spin-kernel";
}

WaitMethod detect_wait_method(cudaStream_t stream, const unsigned* satisfied_word) {
  const CUresult result =
      wait_value32()(reinterpret_cast<CUstream>(stream),
                     reinterpret_cast<CUdeviceptr>(satisfied_word), 0, CU_STREAM_WAIT_VALUE_GEQ);
  if (result == CUDA_ERROR_NOT_SUPPORTED) return WaitMethod::kSpinKernel;
  core::check_driver(result, "cuStreamWaitValue32 (support probe)");
  return WaitMethod::kStreamMemOp;
}

WaitMethod choose_wait_method(cudaStream_t stream, bool force_spin) {
  if (force_spin) return WaitMethod::kSpinKernel;
  unsigned* word = nullptr;
  KILN_CUDA_CHECK(cudaMalloc(&word, sizeof(unsigned)));
  WaitMethod method = WaitMethod::kSpinKernel;
  try {
    KILN_CUDA_CHECK(cudaMemsetAsync(word, 0, sizeof(unsigned), stream));
    method = detect_wait_method(stream, word);
    KILN_CUDA_CHECK(cudaStreamSynchronize(stream));  // the probe's wait ran before the free
  } catch (...) {
    cudaFree(word);
    throw;
  }
  KILN_CUDA_CHECK(cudaFree(word));
  return method;
}

void enqueue_counter_wait(WaitMethod method, const unsigned* counter, unsigned target,
                          cudaStream_t stream, double timeout_seconds, int label) {
  if (!(timeout_seconds > 0)) {
    throw UsageError("counter wait: timeout " + std::to_string(timeout_seconds) +
                     " s; must be > 0");
  }
  if (method == WaitMethod::kStreamMemOp) {
    core::check_driver(
        wait_value32()(reinterpret_cast<CUstream>(stream), reinterpret_cast<CUdeviceptr>(counter),
                       target, CU_STREAM_WAIT_VALUE_GEQ),
        "cuStreamWaitValue32");
  } else {
    spin_until_kernel<<<1, 1, 0, stream>>>(
        counter, target, static_cast<unsigned long long>(timeout_seconds * 1e9), label);
    KILN_CUDA_CHECK_LAUNCH();
  }
}

std::vector<unsigned> raise_words_behind(unsigned* words, const std::vector<unsigned>& targets) {
  std::vector<unsigned> read(targets.size());
  core::Stream side;
  KILN_CUDA_CHECK(cudaMemcpyAsync(read.data(), words, sizeof(unsigned) * read.size(),
                                  cudaMemcpyDeviceToHost, side.get()));
  KILN_CUDA_CHECK(cudaStreamSynchronize(side.get()));
  for (std::size_t w = 0; w < read.size(); ++w) {
    if (static_cast<int>(read[w] - targets[w]) >= 0) continue;
    KILN_CUDA_CHECK(cudaMemcpyAsync(words + w, &targets[w], sizeof(unsigned),
                                    cudaMemcpyHostToDevice, side.get()));
  }
  KILN_CUDA_CHECK(cudaStreamSynchronize(side.get()));
  return read;
}

}  // namespace kiln::overlap
