// Steps that every rank of a group must take together or not at all (building an op's cached
// state, whose constructor makes NCCL calls), agreed through one small NCCL all-gather on kiln's
// communicator: each rank learns every rank's outcome and a few values (rank 0's choices), so that
// all ranks go on or all raise, and no rank is left waiting in a collective that another rank's
// local error made it skip. Only on the paths that create state, never per call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "core/device_buffer.hpp"
#include "core/error.hpp"
#include "core/stream.hpp"

namespace kiln::torch_ops {

enum class Outcome : std::int32_t { kOk = 0, kUsageError = 1, kError = 2 };

// One rank's outcome of a local step, its error text, and values the other ranks need to see.
struct StepReport {
  Outcome outcome = Outcome::kOk;
  std::string error;                 // why, when the outcome is not kOk
  std::vector<std::int32_t> values;  // at most RankAgreement's max_values
};

// Runs `step` (no result: it writes what it makes into its captures), turning kiln::UsageError
// and any other exception into the report, so that the rank still reaches the agreement.
template <class Step>
StepReport attempt(Step&& step) {
  StepReport report;
  try {
    step();
  } catch (const UsageError& e) {
    report.outcome = Outcome::kUsageError;
    report.error = e.what();
  } catch (const std::exception& e) {
    report.outcome = Outcome::kError;
    report.error = e.what();
  }
  return report;
}

// Every rank's outcome and values, by rank.
struct RankReports {
  std::vector<Outcome> outcomes;
  std::vector<std::vector<std::int32_t>> values;  // max_values each (missing ones are 0)
  std::vector<int> failed_ranks() const;
};

class RankAgreement {
 public:
  // Allocates its device buffer and stream now, with the group: an agreement made later must not
  // fail on one rank alone (out of memory is the usual reason a step failed) for want of them.
  RankAgreement(comm::Communicator& comm, std::size_t max_values);

  // Every rank's report (collective over the communicator: every rank of the group calls it at
  // the same point). `what` names the step in NCCL's and the watchdog's messages.
  RankReports exchange(const StepReport& mine, const std::string& what);
  // exchange(), then, when any rank failed, throws on every rank: this rank's own error where it
  // failed, else an error naming the ranks that did. A kiln::UsageError when every failure was
  // one (a ValueError in Python on every rank), else kiln::Error.
  RankReports require_all(const StepReport& mine, const std::string& what);

 private:
  comm::Communicator& comm_;
  std::size_t per_rank_;  // outcome + max_values
  core::Stream stream_;
  core::DeviceBuffer buffer_;
  std::vector<std::int32_t> host_;
};

}  // namespace kiln::torch_ops
