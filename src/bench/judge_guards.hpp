// The judge's guards against outside candidates that game the harness (issue 19). Each names
// one published loophole and the state it watches:
//  - span_hash: a 64-bit fingerprint of device byte spans (the inputs and the reference's
//    output before and after a candidate's call: "changed its inputs"; two runs' outputs:
//    "nondeterministic"). Order-independent sum of per-word mixes, so it is itself deterministic.
//  - L2State: the persisting-L2 carve-out and the stream's access-policy window, snapshotted
//    before a call and compared after ("keeps data resident across calls"), then reset.
//  - floor_seconds: the time below which no legitimate implementation can finish (the
//    problem's provable bytes and FLOPs at the highest rates any implementation could use).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "roofline/roofline.hpp"

namespace kiln::bench {

struct DeviceSpan {
  const void* data = nullptr;
  std::uint64_t bytes = 0;
};

// Enqueues a fingerprint of `spans` (in order; a span's position is mixed in) into
// `result` (device, one uint64), on `stream`, keyed by `salt`. Each word's term is a bijection of
// the word for a known key, so a candidate that knew the key could change its inputs and fix the
// sum up elsewhere: the key must be one the candidate cannot know (SpanHashes draws it at random;
// a candidate's device code cannot see it, though its host code, in the judge's process, could
// search the process's memory for it).
void enqueue_span_hash(const std::vector<DeviceSpan>& spans, std::uint64_t* result,
                       std::uint64_t salt, cudaStream_t stream);

// Holds the device words the hashes are written to, and reads them back.
class SpanHashes {
 public:
  explicit SpanHashes(int slots);
  ~SpanHashes();
  SpanHashes(const SpanHashes&) = delete;
  SpanHashes& operator=(const SpanHashes&) = delete;
  void enqueue(int slot, const std::vector<DeviceSpan>& spans, cudaStream_t stream);
  // After the stream completed.
  std::uint64_t read(int slot) const;

 private:
  std::uint64_t* device_ = nullptr;
  int slots_ = 0;
  std::uint64_t salt_ = 0;  // random, per instance (fingerprints are compared within one)
};

struct L2State {
  std::size_t persisting_limit = 0;
  std::uint64_t window_bytes = 0;
  const void* window_base = nullptr;
  bool operator==(const L2State&) const = default;
};
L2State read_l2_state(cudaStream_t stream);
// "" when `after` equals `before`, else what the call changed.
std::string describe_l2_change(const L2State& before, const L2State& after);
// The state a call must start from: no persisting carve-out, no window, persisting lines reset.
void reset_l2_state(cudaStream_t stream);

// The floor: `model` at `ceilings`, its bytes up to `l2_bytes` at 4x the HBM rate (inputs just
// written or read stay in L2, which legitimately beats HBM; the L2's measured bandwidth on H100
// is well under 4x HBM) and the rest at the HBM rate.
double floor_seconds(const roofline::CostModel& model, roofline::Ceilings ceilings,
                     double l2_bytes);

}  // namespace kiln::bench
