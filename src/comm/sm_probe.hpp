// SM occupancy probe: how many SMs a kernel running at the same time (an NCCL collective, say)
// holds. The probe launches one block per SM, each of 1024 threads and the largest shared memory
// a block may opt in to, so that one probe block fills an SM's shared memory: at most one fits on
// an SM, and none fits on an SM where a CTA of another kernel is resident (on A100, H100 and H200
// every CTA takes at least the 1 KiB of shared memory the system reserves per block, and the
// opt-in limit is the SM's shared memory less that 1 KiB). The blocks that find a free SM start
// together; the others start late, when the other kernel's CTAs (or the probe's own first wave)
// leave. Each block records its SM and start time, holds its SM for `hold_ns`, and records its
// end; count_probe() (sm_probe_result.hpp) turns that into SMs held elsewhere.
//
// Caveats. Only shared memory (and threads) keep other CTAs out: on a GPU whose SM has room for
// the opt-in maximum plus another block's reservation (one that reserves none, such as sm_75), a
// CTA that uses no shared memory and few threads and registers could sit beside a probe block,
// and its SM counts as free. The probe sees only what
// is resident while it starts: a kernel that launches after the probe, or grows onto SMs the probe
// left, is not counted. The probe itself holds every SM it gets for `hold_ns`, delaying the other
// kernel's later CTAs.
#pragma once

#include <cuda_runtime.h>

#include "comm/sm_probe_result.hpp"

namespace kiln::comm {

// Threads per probe block, the most a block may have: besides shared memory, threads then also
// keep a probe block off an SM where other CTAs hold more than (threads per SM - 1024) threads.
inline constexpr int kSmProbeThreads = 1024;
// The longest hold accepted: a longer one is a mistake that would stall the whole GPU.
inline constexpr unsigned long long kSmProbeMaxHoldNs = 10'000'000'000ull;

// Enqueues the probe on `stream` (one block per SM of the current device) and returns after it
// finished (synchronises the stream). `stream` must be able to run beside the kernel measured:
// another stream, not ordered after it. Throws kiln::UsageError for a hold of 0 or above
// kSmProbeMaxHoldNs, kiln::Error when a CUDA call fails or when the device would fit more than
// one probe block on an SM (then the probe cannot tell free SMs from held ones).
SmProbeSamples run_sm_probe(cudaStream_t stream, unsigned long long hold_ns);

}  // namespace kiln::comm
