// Event timing of repeated regions: warm-up, then back-to-back launches with an event between
// each pair, so every iteration gets its own time without host gaps in between; several variants
// interleaved over rounds (time_rounds, the one interleaved timer of kiln).
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <vector>

#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/stream.hpp"

namespace kiln::core {

struct TimingOptions {
  int warmup = 5;
  int iterations = 20;
};

inline void synchronize_stream(cudaStream_t stream) {
  KILN_CUDA_CHECK(cudaStreamSynchronize(stream));
}

// The order of round `round` of interleaved timing: variants round, round + 1, ... (mod
// `variants`), so that no variant always runs first (on 2xH200 the same plan timed first in every
// round read 1-3% slower than its copy timed third, docs/results/2026-11-23-tune/, run 3).
inline std::vector<int> round_order(int variants, int round) {
  std::vector<int> order;
  for (int i = 0; i < variants; ++i) order.push_back((round + i) % variants);
  return order;
}

struct RoundsOptions {
  int warmup = 5;      // untimed launches before a variant's first round (2 before later ones)
  int per_round = 20;  // timed iterations of each variant per round
  int rounds = 1;
};

// The one interleaved timer. Times `variants` things over rounds: in each round every variant in
// round_order, `enqueue(v, i)` putting one iteration of variant v on `stream`, all launches of the
// round back to back with an event between iterations and one `wait` at the round's end, so that
// no host gap sits between variants. A GPU running GEMMs back to back heats and lowers its clock
// over seconds (an H200 fell from 1980 to 1410-1740 MHz, docs/results/2026-11-23-overlap/), so
// timing one variant after the other favours whichever runs on the cooler chip; interleaving
// gives every variant the same mix of clocks. `reduce` may replace a round's times (one per
// variant and iteration, variant-major; multi-rank callers take the max over ranks); then
// `between_rounds(round)` runs. Returns every variant's times in microseconds, pooled.
inline std::vector<std::vector<float>> time_rounds(
    cudaStream_t stream, int variants,
    const std::function<void(int variant, int iteration)>& enqueue, const RoundsOptions& options,
    const std::function<void(cudaStream_t)>& wait = synchronize_stream,
    const std::function<void(std::vector<float>& round_us)>& reduce = {},
    const std::function<void(int round)>& between_rounds = {}) {
  if (variants < 1 || options.per_round < 1 || options.rounds < 1 || options.warmup < 0) {
    throw Error("time_rounds: need >= 1 variant, iteration per round and round, warm-up >= 0");
  }
  const int n = variants, per_round = options.per_round;
  std::vector<std::vector<float>> pooled(n);
  std::vector<Event> events(static_cast<std::size_t>(n) * (per_round + 1));
  const auto event = [&](int v, int k) -> Event& { return events[v * (per_round + 1) + k]; };
  for (int round = 0; round < options.rounds; ++round) {
    for (const int v : round_order(n, round)) {
      for (int w = 0; w < (round == 0 ? options.warmup : 2); ++w) enqueue(v, w);
      event(v, 0).record(stream);
      for (int k = 0; k < per_round; ++k) {
        enqueue(v, k);
        event(v, k + 1).record(stream);
      }
    }
    wait(stream);
    std::vector<float> us(static_cast<std::size_t>(n) * per_round);
    for (int v = 0; v < n; ++v) {
      for (int k = 0; k < per_round; ++k)
        us[v * per_round + k] = 1000.0f * event(v, k + 1).elapsed_ms_since(event(v, k));
    }
    if (reduce) reduce(us);
    for (int v = 0; v < n; ++v)
      pooled[v].insert(pooled[v].end(), us.begin() + v * per_round,
                       us.begin() + (v + 1) * per_round);
    if (between_rounds) between_rounds(round);
  }
  return pooled;
}

// Iterations per round when `iterations` in all are spread over `rounds` (at least 1).
inline int per_round(int iterations, int rounds) {
  return iterations / rounds > 0 ? iterations / rounds : 1;
}

// One thing timed alone (time_rounds with one variant and one round): `body(i)` enqueues one
// iteration. Returns one duration in milliseconds per timed iteration.
inline std::vector<float> time_iterations(
    cudaStream_t stream, const TimingOptions& options, const std::function<void(int)>& body,
    const std::function<void(cudaStream_t)>& wait = synchronize_stream) {
  std::vector<float> ms = time_rounds(
      stream, 1, [&](int, int i) { body(i); }, {options.warmup, options.iterations, 1}, wait)[0];
  for (float& value : ms) value /= 1000.0f;
  return ms;
}

}  // namespace kiln::core
