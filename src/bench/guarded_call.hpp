// One judged call of a solution or an outside candidate (issue 19's hardened judge). Every call,
// timed or not, gets:
//  - fresh inputs (a new seed): a result cached by input pointer or contents, or left in place
//    from an earlier call, is wrong;
//  - the solution's and the reference's outputs poisoned: nothing to replay or to copy;
//  - an input fingerprint before and after: a call that changes its inputs is rejected (the
//    reference runs after the call, on the inputs as they are then);
//  - an output fingerprint when the call's stream completes and again after the checks: work
//    that lands later (another stream, a host thread) is rejected;
//  - the L2 persisting carve-out and the stream's access-policy window reset before and
//    compared after: state kept across calls is rejected;
//  - the reference on the same inputs, then the problem's own compare;
//  - on request, a second call on the same inputs, whose output bytes must equal the first's.
// Timed calls are measured by events around the call alone, after a short device sleep that
// keeps the GPU busy while the host enqueues it (no launch gap inside the span); the reference
// can be timed under the same protocol (time_reference).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/judge_guards.hpp"
#include "bench/problem.hpp"
#include "comm/communicator.hpp"
#include "core/device_buffer.hpp"
#include "core/stream.hpp"

namespace kiln::bench {

class GuardedCaller {
 public:
  // `call` runs the solution or candidate once on the run's buffers and returns "" or why it
  // failed (it must not throw). `what` names the row in waits and errors.
  GuardedCaller(comm::Communicator& comm, cudaStream_t stream, ProblemRun& run,
                std::function<std::string()> call, std::string what);

  struct Outcome {
    std::string failure;  // "" when every check passed
    float us = 0.0f;      // the call's span on the stream (this rank)
  };
  // Collective over the communicator: every rank calls it with the same seed and flags.
  Outcome call(std::uint64_t seed, bool check_determinism);

  // What call() runs for the reference's output on the inputs of `seed` (default: the run's
  // reference()); a screened judgement takes a kept copy instead (suite.cpp). It must leave the
  // reference's output where compare() reads it, on the stream, and return whether it was a
  // kept copy: on a mismatch with one, the run's own reference() decides (a copy a candidate
  // overwrote must not fail every later candidate), and kept_copy_failed() says so.
  void set_reference(std::function<bool(std::uint64_t seed)> reference) {
    reference_ = std::move(reference);
  }
  // Whether a kept reference output disagreed with the run's own reference since construction.
  bool kept_copy_failed() const { return kept_copy_failed_; }

  // The trusted reference timed as a judged call is (fresh inputs, outputs poisoned, L2 state
  // reset, the ranks' streams met, the same lead sleep), so that a speedup compares two calls
  // timed alike: timed back to back instead, the reference ran with the previous call's
  // launches and caches behind it, while the judged solution's median was up to 2.6x its own
  // fastest call (4xH200, 2026-11-27: tp-gemm rows of 0.2-0.6 ms read 0.45-0.78x NCCL). Returns
  // this rank's span in us. Collective, like call().
  float time_reference(std::uint64_t seed);

 private:
  void meet();
  // Everything before a timed span: returns the L2 state read after its reset.
  L2State prepare(std::uint64_t seed);

  comm::Communicator& comm_;
  cudaStream_t stream_;
  ProblemRun& run_;
  std::function<std::string()> call_;
  std::function<bool(std::uint64_t)> reference_;  // empty: run_.reference()
  bool kept_copy_failed_ = false;
  std::string what_;
  std::vector<DeviceSpan> inputs_, outputs_;  // empty for problems that take no candidates
  SpanHashes hashes_{6};
  core::Event start_, stop_;
  core::DeviceBuffer meeting_{4};  // the streams' meeting before a timed call (one int)
};

}  // namespace kiln::bench
