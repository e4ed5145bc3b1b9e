// Screened timing: a cheap ranking figure for kiln's own generated kernels during a search
// (issue 20's engine speed), not a verdict. The judge's own timing (guarded calls) regenerates
// the inputs, fingerprints them, runs the reference and compares before and after every timed
// call: at KernelBench's sizes that moves ~75 GB per 4 ms call. Screened timing calls the
// solution back to back on one set of inputs, each call after a write of twice the L2 (so no call
// reads the last one's data from L2), events around the call alone, a wait after the first call,
// after the first five timed ones (settled: they are the sample) and at the end; the caller then
// poisons the outputs, calls once more and compares that call's output. A search ranks
// with it and confirms its best kernels with guarded timing before reporting them. The first call
// is timed alone: a kernel so slow that the calls asked for would take more than ~0.3 s gets fewer
// (at least 3 timed; none more after a first call of a second or more), so a hopeless candidate
// costs a search little.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "comm/communicator.hpp"

namespace kiln::bench {

// How many warm-up and timed calls follow a first call of `first_call_seconds` (asked: `warmup`
// and `iterations`): all when they fit in about 0.3 s, else fewer, never more than asked and at
// least 3 timed (or `iterations`, when fewer were asked); none after a first call of a second or
// more ({0, 0}: that call is the only sample).
struct ScreenedCounts {
  int warmup = 0, iterations = 0;
};
// With `pace_seconds` (> 0: the fastest correct candidate's screened median so far on this
// problem, in this process), a first call more than 1.5 times that plus a millisecond (room for a
// new library's one-time costs) gets the fewest timed calls and no warm-up: a search only needs
// to know it is off the pace (racing, as in F-Race; Birattari et al., GECCO 2002), and most of a
// population is (H200, 2026-11-29: the timed calls were half of a KernelBench norm's judging).
// More than 10 times the pace plus the millisecond: {0, 0}, the first call is the only sample.
ScreenedCounts screened_counts(int warmup, int iterations, double first_call_seconds,
                               double pace_seconds = 0.0);

// Whether the timed calls so far (µs, at least kSettledCalls of them) settle a screened median:
// their spread (max - min) within 2% of their median. A search ranks candidates by these medians,
// and a kernel whose first five calls agree that closely gains nothing from five more (the
// guarded confirmation of the best times every call asked for). Sequential stopping, as
// benchmark harnesses stop at a target precision (e.g. Google Benchmark's repetitions and
// Criterion's confidence intervals).
constexpr int kSettledCalls = 5;
bool settled(const std::vector<float>& samples);

// Per-call times in microseconds (the first call and the warm-up dropped; `iterations` of them, or
// fewer for a slow kernel or once the first kSettledCalls are settled(); the first call alone for
// one of a second or more), each the maximum over ranks. `call` returns ""
// or why it failed; the first failure goes to `failure` (the later calls still run, so that every
// rank takes the same collectives). Collective over `comm`.
std::vector<float> screened_samples(comm::Communicator& comm, cudaStream_t stream, int warmup,
                                    int iterations, std::size_t l2_bytes,
                                    const std::function<std::string()>& call, std::string& failure,
                                    const std::string& what, double pace_seconds = 0.0);

}  // namespace kiln::bench
