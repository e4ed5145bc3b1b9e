// The tuner's latency curve for comm=ce2 (the two-phase copy-engine AllReduce): one wave group's
// communication alone, made of the same steps as GemmCollective::enqueue_two_phase_group, so that
// the curve prices what the runtime does per group: each peer's 1/W of the group copied to that
// peer (its owner), the owner's sum of the W parts (overlap::sum_parts), and the sum copied back
// to every peer, with the same arrival and freed flags between the steps.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>

#include "comm/communicator.hpp"
#include "core/device_buffer.hpp"
#include "core/dtype.hpp"
#include "overlap/copy_engine_exchange.hpp"

namespace kiln::tune {

class TwoPhaseGroupAlone {
 public:
  // Collective over `comm`: maps the two exchanges' buffers for groups of up to `largest_bytes`
  // per rank. `device_sms` sizes the sum's grid as the runtime does.
  TwoPhaseGroupAlone(comm::Communicator& comm, std::size_t largest_bytes, core::DType dtype,
                     int device_sms);
  ~TwoPhaseGroupAlone();
  TwoPhaseGroupAlone(const TwoPhaseGroupAlone&) = delete;
  TwoPhaseGroupAlone& operator=(const TwoPhaseGroupAlone&) = delete;
  // The part of a `bytes` group each owner sums: bytes / world rounded down to whole 16-byte
  // vectors (the sum's granule), at least one.
  std::size_t part_bytes(std::size_t bytes) const;
  // Enqueues one group of `bytes` from `send` on `stream` (every rank calls it the same number of
  // times: each call is one epoch of both exchanges).
  void enqueue(const void* send, std::size_t bytes, cudaStream_t stream);

 private:
  int rank_ = 0, world_ = 1, device_sms_ = 0;
  core::DType dtype_;
  std::unique_ptr<overlap::CopyEngineExchange> scatter_, gather_;
  core::DeviceBuffer reduced_;
  unsigned epoch_ = 0;
  bool forced_ = false;  // a stall raised the flags: they no longer count this object's epochs
  comm::Communicator& comm_;
  int stall_reporter_ = -1;
};

}  // namespace kiln::tune
