// Screened timing (see screened_timing.hpp).
#include "bench/screened_timing.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "comm/rank_timing.hpp"
#include "core/cuda_check.hpp"
#include "core/device_buffer.hpp"
#include "core/stream.hpp"

namespace kiln::bench {
namespace {

// About what the screened calls of one candidate may take, and the fewest timed calls.
constexpr double kScreenSeconds = 0.3;
constexpr int kFewestScreenedCalls = 3;

}  // namespace

std::vector<float> screened_samples(comm::Communicator& comm, cudaStream_t stream, int warmup,
                                    int iterations, std::size_t l2_bytes,
                                    const std::function<std::string()>& call, std::string& failure,
                                    const std::string& what) {
  // Writing twice the L2's size replaces every line the last call left there.
  core::DeviceBuffer flush(2 * l2_bytes);
  std::vector<core::Event> starts(warmup + iterations + 1), stops(warmup + iterations + 1);
  comm.wait(stream, what);
  // The first call alone: a kernel far off the pace (a single block over a 2G-element tensor
  // takes seconds) is ranked by fewer calls, so that a search pays about kScreenSeconds for it.
  const auto enqueue = [&](int i) {
    KILN_CUDA_CHECK(cudaMemsetAsync(flush.data(), i & 0xff, flush.bytes(), stream));
    starts[i].record(stream);
    const std::string result = call();
    stops[i].record(stream);
    if (!result.empty() && failure.empty())
      failure = fmt::format("screened call {}: {}", i, result);
  };
  enqueue(0);
  comm.wait(stream, what);
  const double first_seconds = std::max(
      1e-6, comm::max_over_ranks(comm, 1e-3 * stops[0].elapsed_ms_since(starts[0]), stream));
  const int affordable = static_cast<int>(kScreenSeconds / first_seconds);
  if (affordable < warmup + iterations) {
    iterations = std::max(kFewestScreenedCalls, std::min(iterations, affordable));
    warmup = std::clamp(affordable - iterations, 0, warmup);
  }
  warmup += 1;  // the first call
  const int calls = warmup + iterations;
  for (int i = 1; i < calls; ++i) enqueue(i);
  comm.wait(stream, what);
  std::vector<float> samples;
  for (int i = warmup; i < calls; ++i)
    samples.push_back(1000.0f * stops[i].elapsed_ms_since(starts[i]));
  comm::max_over_ranks(comm, samples, stream);
  return samples;
}

}  // namespace kiln::bench
