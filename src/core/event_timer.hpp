// Event timing of a repeated region: warm-up, then `iterations` back-to-back launches with an
// event between each pair, so every iteration gets its own time without host gaps in between.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <vector>

#include "core/stream.hpp"

namespace kiln::core {

struct TimingOptions {
  int warmup = 5;
  int iterations = 20;
};

// `body(i)` enqueues one iteration on `stream`. `wait(stream)` blocks until the stream is done;
// multi-GPU callers pass a watchdog wait that aborts a hung collective instead of blocking forever.
// Returns one duration in milliseconds per timed iteration.
inline std::vector<float> time_iterations(
    cudaStream_t stream, const TimingOptions& options, const std::function<void(int)>& body,
    const std::function<void(cudaStream_t)>& wait = [](cudaStream_t s) {
      KILN_CUDA_CHECK(cudaStreamSynchronize(s));
    }) {
  for (int i = 0; i < options.warmup; ++i) body(i);
  wait(stream);
  std::vector<Event> events;
  events.reserve(options.iterations + 1);
  for (int i = 0; i <= options.iterations; ++i) events.emplace_back();
  events[0].record(stream);
  for (int i = 0; i < options.iterations; ++i) {
    body(i);
    events[i + 1].record(stream);
  }
  wait(stream);
  std::vector<float> milliseconds(options.iterations);
  for (int i = 0; i < options.iterations; ++i) {
    milliseconds[i] = events[i + 1].elapsed_ms_since(events[i]);
  }
  return milliseconds;
}

// Measures `variants` things round-robin: in each of `rounds` rounds, sample(v, warmup,
// iterations) for every v in turn (warm-up `warmup` in the first round, 2 after), each returning
// `iterations` per-iteration times; returns every variant's samples pooled. A GPU running GEMMs
// back to back heats and lowers its clock over seconds (an H200 fell from 1980 to 1410-1740 MHz,
// docs/results/2026-11-23-overlap/), so timing one variant after the other favours whichever
// runs on the cooler chip; interleaving gives every variant the same mix of clocks. Each round
// starts one variant later than the one before (round r: r, r+1, ..., wrapping), so no variant
// always runs first: on 2xH200 the same plan timed first in every round read 1-3% slower than its
// copy timed third (docs/results/2026-11-23-tune/, run 3 compare).
inline std::vector<std::vector<float>> sample_interleaved(
    int variants, int rounds, int warmup, int iterations,
    const std::function<std::vector<float>(int variant, int warmup, int iterations)>& sample) {
  std::vector<std::vector<float>> pooled(variants);
  const int per_round = iterations / rounds > 0 ? iterations / rounds : 1;
  for (int round = 0; round < rounds; ++round) {
    for (int i = 0; i < variants; ++i) {
      const int v = (round + i) % variants;
      const std::vector<float> times = sample(v, round == 0 ? warmup : 2, per_round);
      pooled[v].insert(pooled[v].end(), times.begin(), times.end());
    }
  }
  return pooled;
}

}  // namespace kiln::core
