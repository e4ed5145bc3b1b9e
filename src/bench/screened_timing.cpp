// Screened timing (see screened_timing.hpp).
#include "bench/screened_timing.hpp"

#include <fmt/format.h>

#include "comm/rank_timing.hpp"
#include "core/cuda_check.hpp"
#include "core/device_buffer.hpp"
#include "core/stream.hpp"

namespace kiln::bench {

std::vector<float> screened_samples(comm::Communicator& comm, cudaStream_t stream, int warmup,
                                    int iterations, std::size_t l2_bytes,
                                    const std::function<std::string()>& call, std::string& failure,
                                    const std::string& what) {
  const int calls = warmup + iterations;
  // Writing twice the L2's size replaces every line the last call left there.
  core::DeviceBuffer flush(2 * l2_bytes);
  std::vector<core::Event> starts(calls), stops(calls);
  comm.wait(stream, what);
  for (int i = 0; i < calls; ++i) {
    KILN_CUDA_CHECK(cudaMemsetAsync(flush.data(), i & 0xff, flush.bytes(), stream));
    starts[i].record(stream);
    const std::string result = call();
    stops[i].record(stream);
    if (!result.empty() && failure.empty())
      failure = fmt::format("screened call {}: {}", i, result);
  }
  comm.wait(stream, what);
  std::vector<float> samples;
  for (int i = warmup; i < calls; ++i)
    samples.push_back(1000.0f * stops[i].elapsed_ms_since(starts[i]));
  comm::max_over_ranks(comm, samples, stream);
  return samples;
}

}  // namespace kiln::bench
