// `kiln reduce bench`: every reduction variant against cub::DeviceReduce per size: time, GB/s
// read, % of the measured copy bandwidth, speed relative to CUB, and correctness against a host
// reference.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/ncu_csv.hpp"
#include "core/stats.hpp"
#include "kernels/reduce_variant.hpp"

namespace kiln::benchmarks {

struct ReduceBenchOptions {
  kernels::ReduceOp op = kernels::ReduceOp::kSum;
  core::DType dtype = core::DType::kInt32;
  std::vector<std::int64_t> sizes = {1000, 1000000, 100000000, 1000000000};
  std::vector<kernels::ReduceVariant> variants;  // default: every preset
  int misalign = 0;  // elements the input starts after a 256-byte boundary
  int warmup = 5;
  int iterations = 50;
  std::uint64_t seed = 1;
  // --ncu: profile each variant's first pass at `ncu_size` elements with Nsight Compute (a child
  // process per variant running this binary with profile_only).
  bool ncu = false;
  std::int64_t ncu_size = 0;  // 0: the largest of `sizes`
  // Run each variant once per size, nothing else (what the ncu child runs).
  bool profile_only = false;
};

// The study's metrics of one variant's first pass, read by Nsight Compute.
struct NcuMetrics {
  std::string variant;
  std::int64_t size = 0;
  double duration_us = 0.0;
  double dram_pct_of_peak = 0.0;
  double warp_execution_efficiency_pct = 0.0;  // active threads per executed instruction / 32
  double achieved_occupancy_pct = 0.0;
  double branch_efficiency_pct = 0.0;
  std::string error;  // why the metrics are missing, when they are
};

struct ReduceResult {
  std::string variant;  // preset name or "cub"
  std::string knobs;
  std::int64_t size = 0;
  core::TimingStats us;
  double gbps = 0.0;           // bytes read / median time
  double copy_fraction = 0.0;  // gbps / measured copy GB/s (read + write)
  double cub_over_this = 0.0;  // CUB's median / this median (> 1: faster than CUB)
  double error = 0.0;          // |result - reference| / max(|reference|, 1); 0 exact
  bool correct = false;
  // Why this row has no measurement: the error its variant (or CUB) met at this size, e.g. an
  // allocation that did not fit. Empty when it ran; otherwise its numbers are 0 and `correct`
  // false.
  std::string failure;
};

struct ReduceBenchReport {
  double copy_gbps = 0.0;  // cudaMemcpy device to device, bytes read + written per second
  std::int64_t l2_bytes = 0;
  std::vector<ReduceResult> results;
  std::vector<NcuMetrics> ncu;
};

// The metric names Nsight Compute is asked for, and the parse of its --csv output (values by
// metric name; empty when the output holds none). Host-only, tested on CPU.
using core::NcuValue;
using core::parse_ncu_csv;  // core/ncu_csv.hpp
std::vector<std::string> ncu_metric_names();
// Fills the metrics of `m` from parsed values (durations converted to microseconds).
void apply_ncu_values(const std::vector<NcuValue>& values, NcuMetrics& m);

// The table's header and one row in its columns (host-only, tested on CPU). A row that did not run
// shows "-" in every measured column and "did not run: <failure>" at the end; cub/this is "-" when
// either it or CUB did not run (cub_over_this 0).
std::string reduce_table_header();
std::string format_reduce_row(const ReduceResult& row);

// Parses "1e3,1e6,2e9" or "1000" style sizes (each >= 1); throws kiln::UsageError naming
// `argument`.
std::vector<std::int64_t> parse_sizes(const std::string& text, const std::string& argument);

// Throws kiln::UsageError naming the flag for options no run can satisfy (needs no GPU).
void validate(const ReduceBenchOptions& options);

// Prints progress to stderr and the table to stdout as it goes.
ReduceBenchReport run_reduce_bench(const ReduceBenchOptions& options);
nlohmann::json to_json(const ReduceBenchOptions& options, const ReduceBenchReport& report);

}  // namespace kiln::benchmarks
