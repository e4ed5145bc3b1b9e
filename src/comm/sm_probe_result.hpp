// What an SM occupancy probe recorded (one sample per probe block) and how it is counted: how many
// SMs another kernel, running at the same time, held. Plain arithmetic, no CUDA: tested on the CPU.
#pragma once

#include <vector>

namespace kiln::comm {

// One entry per probe block, in block order (the three vectors have the same length).
struct SmProbeSamples {
  std::vector<int> smid;                     // the SM the block ran on (%smid)
  std::vector<unsigned long long> start_ns;  // %globaltimer when the block started
  std::vector<unsigned long long> end_ns;    // %globaltimer when the block finished its hold
};

struct SmProbeResult {
  int sm_count = 0;                 // probe blocks = SMs of the device
  int started_at_once = 0;          // blocks that found a free SM at once (the first wave)
  int held_elsewhere = 0;           // SMs something else held: sm_count - started_at_once
  double first_wave_spread_us = 0;  // latest first-wave start minus the earliest start
  bool overlapped = false;          // a late block waited until the first wave was ending
};

// Blocks whose start is within `window_ns` of the earliest start (inclusive) ran at once on free
// SMs; the rest waited for an SM that something else held: held_elsewhere = sm_count -
// started_at_once. overlapped: some late block (not in the first wave) started later than the
// first probe block's end minus `window_ns`, i.e. it got its SM only as the probe's own first wave
// gave SMs back, so the other kernel still held its SMs for the whole hold. `window_ns` should be
// well above the first wave's launch spread (a few µs) and below half the hold.
// Throws kiln::UsageError when the sample vectors are empty or differ in length, when their
// length is not `sm_count` (the probe launches one block per SM), or when a block ends before it
// starts.
SmProbeResult count_probe(const SmProbeSamples& samples, int sm_count,
                          unsigned long long window_ns);

}  // namespace kiln::comm
