#include "comm/sm_probe_result.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"

namespace kiln::comm {

SmProbeResult count_probe(const SmProbeSamples& samples, int sm_count,
                          unsigned long long window_ns) {
  const std::size_t blocks = samples.start_ns.size();
  if (blocks == 0) throw UsageError("SM probe: no samples");
  if (samples.smid.size() != blocks || samples.end_ns.size() != blocks)
    throw UsageError(fmt::format("SM probe: {} SM ids, {} start times and {} end times differ",
                                 samples.smid.size(), blocks, samples.end_ns.size()));
  if (sm_count <= 0 || static_cast<std::size_t>(sm_count) != blocks)
    throw UsageError(
        fmt::format("SM probe: {} samples for {} SMs (one block per SM)", blocks, sm_count));
  for (std::size_t i = 0; i < blocks; ++i) {
    if (samples.end_ns[i] < samples.start_ns[i])
      throw UsageError(fmt::format("SM probe: block {} ends ({} ns) before it starts ({} ns)", i,
                                   samples.end_ns[i], samples.start_ns[i]));
  }

  const unsigned long long earliest =
      *std::min_element(samples.start_ns.begin(), samples.start_ns.end());
  // Every block holds its SM for the same time from its own start, so the first end is the
  // earliest block's end: the first moment a probe SM came free.
  const unsigned long long first_end =
      *std::min_element(samples.end_ns.begin(), samples.end_ns.end());

  SmProbeResult result;
  result.sm_count = sm_count;
  unsigned long long latest_first_wave = earliest;
  for (std::size_t i = 0; i < blocks; ++i) {
    const unsigned long long start = samples.start_ns[i];
    // Written as differences from values known to be smaller: no unsigned wrap-around.
    if (start - earliest <= window_ns) {
      ++result.started_at_once;
      latest_first_wave = std::max(latest_first_wave, start);
    } else if (start > first_end || first_end - start < window_ns) {
      // Only late blocks count: a first-wave block near the window's edge did not wait, even
      // when the window is a large part of the hold.
      result.overlapped = true;
    }
  }
  result.held_elsewhere = sm_count - result.started_at_once;
  result.first_wave_spread_us = static_cast<double>(latest_first_wave - earliest) / 1e3;
  return result;
}

}  // namespace kiln::comm
