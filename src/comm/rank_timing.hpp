// Timing across ranks: every rank times the same enqueued work with CUDA events, and each
// iteration's figure is the slowest rank's (a multi-GPU operation is done when its last rank is).
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "core/event_timer.hpp"

namespace kiln::comm {

// core::time_rounds across ranks: each round's times replaced by their maximum over ranks, the
// round's wait watched by the communicator (`what` names the work in its messages). Collective.
std::vector<std::vector<float>> time_rounds_over_ranks(
    Communicator& comm, cudaStream_t stream, int variants,
    const std::function<void(int variant, int iteration)>& enqueue,
    const core::RoundsOptions& options, const std::string& what,
    const std::function<void(int round)>& between_rounds = {});

// Per-iteration times of `body` (warm-up first), each reduced to the maximum over ranks, in
// microseconds: time_rounds_over_ranks with one variant and one round.
std::vector<float> samples_over_ranks(Communicator& comm, cudaStream_t stream, int warmup,
                                      int iterations, const std::function<void(int)>& body,
                                      const std::string& what);

// The maximum of `value` over ranks (collective).
double max_over_ranks(Communicator& comm, double value, cudaStream_t stream);

// Each element replaced by its maximum over ranks (collective; every rank passes as many).
void max_over_ranks(Communicator& comm, std::vector<float>& values, cudaStream_t stream);

}  // namespace kiln::comm
