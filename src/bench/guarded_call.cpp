// One judged call (see guarded_call.hpp).
#include "bench/guarded_call.hpp"

#include <utility>

#include <nccl.h>

#include "bench/kept_references.hpp"
#include "comm/rank_timing.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/sleep.hpp"

namespace kiln::bench {
namespace {

enum Slot {
  kInputsBefore,
  kInputsAfter,
  kOutputsAtReturn,
  kOutputsAfterChecks,
  kOutputsSecond,
  kOutputsSecondSettled
};

// Long enough to cover the host's enqueue of a call (a few launches) after the streams' meeting,
// short beside any timed region worth judging; it runs before the start event, outside the span.
constexpr std::uint64_t kLeadSleepNs = 30'000;

}  // namespace

GuardedCaller::GuardedCaller(comm::Communicator& comm, cudaStream_t stream, ProblemRun& run,
                             std::function<std::string()> call, std::string what)
    : comm_(comm), stream_(stream), run_(run), call_(std::move(call)), what_(std::move(what)) {
  try {
    const CandidateBuffers buffers = run_.candidate_buffers();
    for (std::size_t i = 0; i < buffers.inputs.size(); ++i)
      inputs_.push_back({buffers.inputs[i], buffers.input_bytes[i]});
    for (std::size_t i = 0; i < buffers.outputs.size(); ++i)
      outputs_.push_back({buffers.outputs[i], buffers.output_bytes[i]});
  } catch (const UsageError&) {
    // A problem that takes no candidates: its own solutions are judged without fingerprints.
  }
}

void GuardedCaller::meet() {
  comm_.wait(stream_, what_);
  if (comm_.size() > 1) (void)max_over_ranks(comm_, 0.0, stream_);
}

L2State GuardedCaller::prepare(std::uint64_t seed) {
  // No peer still reads the last call's inputs when they are replaced.
  meet();
  reset_l2_state(stream_);
  const L2State before = read_l2_state(stream_);
  run_.make_inputs(seed);
  hashes_.enqueue(kInputsBefore, inputs_, stream_);
  run_.poison_outputs();
  // The ranks' streams meet on the device right before the span: the host meeting above leaves
  // them as far apart as the ranks' wake-ups from waiting (up to a backoff sleep), which a call
  // that waits for its peers (a peer-memory barrier, an NCCL kernel) would count as its own time,
  // while the reference, timed back to back, pays that skew once (4xH200, 2026-11-27: a one-shot
  // AllReduce of 16 MiB read 787 us here against ~60 us of kernel).
  if (comm_.size() > 1) {
    comm_.call(what_ + ": the streams' meeting", [&] {
      return ncclAllReduce(meeting_.data(), meeting_.data(), 1, ncclInt32, ncclMax, comm_.get(),
                           stream_);
    });
  }
  core::enqueue_sleep(kLeadSleepNs, stream_);
  return before;
}

float GuardedCaller::time_reference(std::uint64_t seed) {
  (void)prepare(seed);
  start_.record(stream_);
  run_.reference();
  stop_.record(stream_);
  // The same device work behind the span as a judged call's, so that the next call finds the
  // GPU as a judged call leaves it.
  hashes_.enqueue(kOutputsAtReturn, outputs_, stream_);
  comm_.wait(stream_, what_);
  return 1000.0f * stop_.elapsed_ms_since(start_);
}

GuardedCaller::Outcome GuardedCaller::call(std::uint64_t seed, bool check_determinism) {
  const L2State before = prepare(seed);
  start_.record(stream_);
  Outcome out;
  out.failure = call_();
  stop_.record(stream_);
  // Fingerprinted in stream order right behind the call, before the host waits: work the call
  // left on another stream or a host thread is then likely still in flight and shows as a
  // change by the next fingerprint.
  hashes_.enqueue(kOutputsAtReturn, outputs_, stream_);
  comm_.wait(stream_, what_);
  const L2State after = read_l2_state(stream_);
  // Every rank's call is over before anyone fingerprints inputs a peer may have written.
  meet();
  hashes_.enqueue(kInputsAfter, inputs_, stream_);
  const bool kept_copy = reference_ ? reference_(seed) : (run_.reference(), false);
  comm_.wait(stream_, what_);
  out.us = 1000.0f * stop_.elapsed_ms_since(start_);
  if (out.failure.empty()) out.failure = describe_l2_change(before, after);
  if (out.failure.empty() && hashes_.read(kInputsBefore) != hashes_.read(kInputsAfter))
    out.failure = "changed its inputs (their fingerprint differs after the call)";
  if (out.failure.empty())
    out.failure = compare_deciding(
        run_, kept_copy, [&] { comm_.wait(stream_, what_); }, kept_copy_failed_);
  hashes_.enqueue(kOutputsAfterChecks, outputs_, stream_);
  comm_.wait(stream_, what_);
  if (out.failure.empty() && hashes_.read(kOutputsAtReturn) != hashes_.read(kOutputsAfterChecks)) {
    out.failure =
        "work outside the given stream: the output changed after the call's stream had "
        "completed";
  }
  if (check_determinism && !outputs_.empty()) {
    // All ranks take the second call together (a candidate may synchronise with its peers),
    // whatever the first one's outcome on this rank.
    meet();
    run_.poison_outputs();
    const std::string second = call_();
    comm_.wait(stream_, what_);
    hashes_.enqueue(kOutputsSecond, outputs_, stream_);
    comm_.wait(stream_, what_);
    // Everything on the device finished: an output that changes now was written outside the
    // stream (which would otherwise read as a nondeterministic output).
    KILN_CUDA_CHECK(cudaDeviceSynchronize());
    hashes_.enqueue(kOutputsSecondSettled, outputs_, stream_);
    comm_.wait(stream_, what_);
    if (out.failure.empty() && !second.empty()) out.failure = "second call: " + second;
    if (out.failure.empty() &&
        hashes_.read(kOutputsSecond) != hashes_.read(kOutputsSecondSettled)) {
      out.failure =
          "work outside the given stream: the output changed after the call's stream had "
          "completed";
    }
    if (out.failure.empty() && hashes_.read(kOutputsSecond) != hashes_.read(kOutputsAfterChecks)) {
      out.failure =
          "nondeterministic: a second call on the same inputs wrote different output bytes";
    }
  }
  return out;
}

}  // namespace kiln::bench
