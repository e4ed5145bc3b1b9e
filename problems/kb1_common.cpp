// Host side of the kb1 problems' shared machinery (see kb1_common.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "comm/communicator.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "problems/kb1_common.hpp"

namespace kiln::problems::kb1 {

std::string describe(const Mismatch& m, std::int64_t count, double tolerance) {
  if (m.count == 0 && m.relative_l2 > kRelativeL2Tolerance)
    return fmt::format(
        "every element is within atol {} + rtol {} of the reference, but the output's relative L2 "
        "error is {:.3g} (at most {}): values below atol are wrong as a whole",
        tolerance, tolerance, m.relative_l2, kRelativeL2Tolerance);
  if (m.count == 0) return "";
  return fmt::format(
      "{} of {} elements differ; first at {}: got {:.9g}, expected {:.9g} (atol {}, "
      "rtol {})",
      m.count, count, m.first, m.got, m.want, tolerance, tolerance);
}

std::vector<float> copy_floats(const float* data, std::int64_t offset, std::int64_t count) {
  std::vector<float> host(static_cast<std::size_t>(count));
  KILN_CUDA_CHECK(
      cudaMemcpy(host.data(), data + offset, sizeof(float) * host.size(), cudaMemcpyDeviceToHost));
  return host;
}

void for_each_chunk(std::int64_t chunks, const std::function<void(std::int64_t)>& work_on) {
  if (chunks <= 0) return;
  // Every thread on the caller's device (a new thread starts on device 0). Without a device
  // there is nothing to set: a chunk that copies fails with its own error.
  int device = 0;
  const bool on_device = cudaGetDevice(&device) == cudaSuccess;
  if (!on_device) (void)cudaGetLastError();
  std::atomic<std::int64_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_lock;
  const auto work = [&] {
    try {
      if (on_device) KILN_CUDA_CHECK(cudaSetDevice(device));
      for (std::int64_t c = next++; c < chunks; c = next++) work_on(c);
    } catch (...) {
      const std::lock_guard<std::mutex> hold(failure_lock);
      if (!failure) failure = std::current_exception();
      next = chunks;  // the others stop after their current chunk
    }
  };
  const auto threads =
      static_cast<std::int64_t>(std::clamp(std::thread::hardware_concurrency(), 1u, 16u));
  std::vector<std::thread> pool;
  for (std::int64_t t = 1; t < std::min(threads, chunks); ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

double sum_over_chunks(std::int64_t chunks, const std::function<double(std::int64_t)>& chunk_sum) {
  std::vector<double> partial(static_cast<std::size_t>(std::max<std::int64_t>(chunks, 0)), 0.0);
  for_each_chunk(chunks,
                 [&](std::int64_t c) { partial[static_cast<std::size_t>(c)] = chunk_sum(c); });
  double sum = 0.0;
  for (const double p : partial) sum += p;
  return sum;
}

Sample sample_floats(const float* data, std::int64_t count, std::int64_t per_range) {
  Sample s;
  const std::int64_t n = std::min(per_range, count);
  for (const std::int64_t start : {std::int64_t{0}, (count - n) / 2, count - n}) {
    const std::vector<float> part = copy_floats(data, start, n);
    for (std::int64_t i = 0; i < n; ++i) {
      s.index.push_back(start + i);
      s.value.push_back(part[static_cast<std::size_t>(i)]);
    }
  }
  return s;
}

void require_one_rank(const bench::RankContext& context, const std::string& problem) {
  if (context.comm.size() != 1)
    throw UsageError(fmt::format("{} is a single-GPU problem: run it with -g 1", problem));
}

bench::ProblemSize size_of(const std::string& name,
                           std::initializer_list<std::pair<const char*, std::int64_t>> dims) {
  bench::ProblemSize size;
  size.name = name;
  for (const auto& [key, value] : dims) size.dims[key] = value;
  return size;
}

}  // namespace kiln::problems::kb1
