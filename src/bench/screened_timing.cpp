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
// A first call this long is the only sample: such a kernel is a hundred times off a KernelBench
// problem's pace, and three more calls of it cost the GPU's turn seconds (H200, 2026-11-29: 1.2 s
// calls among a Frobenius norm's candidates). A one-time cost in a first call (a workspace's
// allocation, lazy module loading) is milliseconds, not a second.
constexpr double kOnlySampleSeconds = 1.0;
// Off the pace: slower than this many times the fastest so far, plus kOneTimeSeconds.
constexpr double kOffPace = 1.5;
constexpr double kOneTimeSeconds = 1e-3;
// Far off the pace: the first call is the only sample. A kernel ten times slower than the best so
// far is ranked last whatever its next calls say, and the call is warm (the correctness trials
// ran the same library first). Replaying the whole set's logs (2026-11-29, 6157 evaluations):
// 86 candidates, ~30 s of the GPU's turn in three more calls each.
constexpr double kFarOffPace = 10.0;

}  // namespace

bool settled(const std::vector<float>& samples) {
  if (static_cast<int>(samples.size()) < kSettledCalls) return false;
  std::vector<float> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  const float median = sorted[sorted.size() / 2];
  return median > 0 && sorted.back() - sorted.front() <= 0.02f * median;
}

ScreenedCounts screened_counts(int warmup, int iterations, double first_call_seconds,
                               double pace_seconds) {
  if (first_call_seconds >= kOnlySampleSeconds) return {0, 0};
  if (pace_seconds > 0 && first_call_seconds > kFarOffPace * pace_seconds + kOneTimeSeconds)
    return {0, 0};
  if (pace_seconds > 0 && first_call_seconds > kOffPace * pace_seconds + kOneTimeSeconds)
    return {0, std::min(kFewestScreenedCalls, iterations)};
  const double affordable_calls = kScreenSeconds / std::max(first_call_seconds, 1e-9);
  if (affordable_calls >= warmup + iterations) return {warmup, iterations};
  const int affordable = static_cast<int>(affordable_calls);
  // Never more than asked (the caller's events are sized for that), at least
  // kFewestScreenedCalls timed, and the warm-up only from what is left.
  const int timed =
      std::max(std::min(kFewestScreenedCalls, iterations), std::min(iterations, affordable));
  return {std::clamp(affordable - timed, 0, warmup), timed};
}

std::vector<float> screened_samples(comm::Communicator& comm, cudaStream_t stream, int warmup,
                                    int iterations, std::size_t l2_bytes,
                                    const std::function<std::string()>& call, std::string& failure,
                                    const std::string& what, double pace_seconds) {
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
  const ScreenedCounts counts = screened_counts(warmup, iterations, first_seconds, pace_seconds);
  if (counts.iterations == 0 && iterations > 0)
    return {static_cast<float>(1e6 * first_seconds)};  // in µs: the only sample
  warmup = counts.warmup + 1;                          // the first call is one more
  iterations = counts.iterations;
  const int calls = warmup + iterations;
  const auto enqueue_until = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      enqueue(i);
      // Calls of a quarter second or more gain nothing from being queued back to back, and a
      // wait each keeps every wait short of the communicator's timeout, as guarded calls are.
      if (first_seconds >= 0.25) comm.wait(stream, what);
    }
    comm.wait(stream, what);
  };
  const auto samples_until = [&](int to) {
    std::vector<float> samples;
    for (int i = warmup; i < to; ++i)
      samples.push_back(1000.0f * stops[i].elapsed_ms_since(starts[i]));
    comm::max_over_ranks(comm, samples, stream);  // every rank decides on the same figures
    return samples;
  };
  // A look after the first kSettledCalls timed calls when more were asked: settled, they are the
  // sample (one wait between calls; each call has its own events).
  const int look = warmup + kSettledCalls;
  if (iterations > kSettledCalls) {
    enqueue_until(1, look);
    std::vector<float> early = samples_until(look);
    if (settled(early)) return early;
    enqueue_until(look, calls);
  } else {
    enqueue_until(1, calls);
  }
  return samples_until(calls);
}

}  // namespace kiln::bench
