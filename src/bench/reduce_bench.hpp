// `kiln reduce bench`: every reduction variant against cub::DeviceReduce per size: time, GB/s
// read, % of the measured copy bandwidth, speed relative to CUB, and correctness against a host
// reference.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/stats.hpp"
#include "kernels/reduce_variant.hpp"

namespace kiln::bench {

struct ReduceBenchOptions {
  kernels::ReduceOp op = kernels::ReduceOp::kSum;
  core::DType dtype = core::DType::kInt32;
  std::vector<std::int64_t> sizes = {1000, 1000000, 100000000, 1000000000};
  std::vector<kernels::ReduceVariant> variants;  // default: every preset
  int misalign = 0;  // elements the input starts after a 256-byte boundary
  int warmup = 5;
  int iterations = 50;
  std::uint64_t seed = 1;
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
};

struct ReduceBenchReport {
  double copy_gbps = 0.0;  // cudaMemcpy device to device, bytes read + written per second
  std::int64_t l2_bytes = 0;
  std::vector<ReduceResult> results;
};

// Parses "1e3,1e6,2e9" or "1000" style sizes (each >= 1); throws kiln::UsageError naming
// `argument`.
std::vector<std::int64_t> parse_sizes(const std::string& text, const std::string& argument);

// Throws kiln::UsageError naming the flag for options no run can satisfy (needs no GPU).
void validate(const ReduceBenchOptions& options);

// Prints progress to stderr and the table to stdout as it goes.
ReduceBenchReport run_reduce_bench(const ReduceBenchOptions& options);
nlohmann::json to_json(const ReduceBenchOptions& options, const ReduceBenchReport& report);

}  // namespace kiln::bench
