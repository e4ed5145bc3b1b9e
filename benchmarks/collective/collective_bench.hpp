// `kiln bench collective`: an nccl-tests-style sweep over message sizes for one collective, with
// per-iteration event timing, time = max over ranks, algbw/busbw and an exact correctness check.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "comm/collective.hpp"
#include "core/dtype.hpp"
#include "core/stats.hpp"

namespace kiln::comm {
class Communicator;
}

namespace kiln::benchmarks {

struct CollectiveBenchOptions {
  comm::CollectiveOp op = comm::CollectiveOp::kAllReduce;
  core::DType dtype = core::DType::kFp32;
  std::uint64_t min_bytes = 1ull << 20;
  std::uint64_t max_bytes = 1ull << 30;
  std::uint64_t factor = 2;
  int warmup = 5;
  int iterations = 20;
  int check = 1;
  double timeout_seconds = 60.0;
  int world_size = 1;
  // Fault injection for the watchdog test: that rank stops calling collectives.
  int debug_hang_rank = -1;
  // Keep the communicator non-blocking for every call (see comm::NcclMode).
  bool nccl_nonblocking = false;
};

// Throws kiln::UsageError naming the flag and the accepted range. `visible_gpus` < 0 skips the
// GPU-count check (dry runs, external launchers that place ranks themselves).
void validate(const CollectiveBenchOptions& options, int visible_gpus);

// min, min*f, min*f^2, ... up to max (inclusive), as nccl-tests' -b/-e/-f.
std::vector<std::uint64_t> message_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes,
                                         std::uint64_t factor);

struct CollectiveRow {
  comm::CollectiveCounts counts;
  core::TimingStats time_us;  // per-iteration time, max over ranks, then summarised
  double algbw_gbps = 0.0;    // from the median time
  double busbw_gbps = 0.0;
  std::uint64_t wrong = 0;  // wrong elements summed over ranks (before and after timing)
  bool checked = false;
};

struct RankDevice {
  int rank = 0;
  int pid = 0;
  int device = 0;
  std::string bus_id;
  std::string name;
};

// Runs the sweep on this rank; collective over all ranks of `comm`. `on_row` is called on every
// rank after each size with the reduced row (rank 0 prints it).
std::vector<CollectiveRow> run_collective_bench(
    comm::Communicator& comm, const CollectiveBenchOptions& options,
    const std::function<void(const CollectiveRow&)>& on_row);

// Every rank's device, gathered to all ranks (for headers and provenance).
std::vector<RankDevice> gather_rank_devices(comm::Communicator& comm);
// "NVIDIA H200 [0000:18:00.0]" per rank, for provenance.
std::vector<std::string> device_labels(const std::vector<RankDevice>& devices);

std::string format_table_header(const CollectiveBenchOptions& options);
std::string format_row(const CollectiveBenchOptions& options, const CollectiveRow& row);
// The result file's fields (parameters and rows; the envelope adds provenance).
nlohmann::json collective_bench_json(const CollectiveBenchOptions& o,
                                     const std::vector<CollectiveRow>& rows, int world);
nlohmann::json row_to_json(const CollectiveRow& row);

}  // namespace kiln::benchmarks
