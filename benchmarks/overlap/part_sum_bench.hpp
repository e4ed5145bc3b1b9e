// `kiln overlap sum`: overlap::sum_parts alone on one GPU, the chunked ReduceScatter's final sum
// and comm=ce2's owner reduction. Per (parts W, bytes per part): each grid (CTAs per SM) timed
// interleaved over rounds, on rotating buffer sets larger than L2; the HBM bytes it moves (W parts
// read, one written) over the median time, and that rate's fraction of the device's HBM ceiling.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/stats.hpp"

namespace kiln::benchmarks {

struct PartSumBenchOptions {
  core::DType dtype = core::DType::kBf16;
  std::vector<int> parts = {2, 4, 8};
  std::vector<std::uint64_t> part_bytes = {std::uint64_t{8} << 20, std::uint64_t{32} << 20};
  std::vector<int> ctas_per_sm = {2, 8};  // overlap::kMaxCtasPerSm at most
  int warmup = 5;
  int iterations = 40;
  int rounds = 4;
};

// Throws kiln::UsageError naming the flag and the accepted range.
void validate(const PartSumBenchOptions& options);

struct PartSumRow {
  int parts = 0;
  std::uint64_t part_bytes = 0;
  int ctas_per_sm = 0;
  int buffer_sets = 0;  // rotated so that one iteration's data is not in L2 from the last
  core::TimingStats us;
  double hbm_bytes = 0.0;          // (parts + 1) x part_bytes
  double gb_per_second = 0.0;      // hbm_bytes / median
  double fraction_of_hbm = 0.0;    // of the ceiling below; 0 where the device has no profile
  bool same_bits_as_first = true;  // this grid's output equals the first grid's
};

// The HBM bytes one sum moves: every part read once and the result written once.
double part_sum_hbm_bytes(int parts, std::uint64_t part_bytes);

// `hbm_bytes_per_second` <= 0: no ceiling known (fractions stay 0).
std::vector<PartSumRow> run_part_sum_bench(const PartSumBenchOptions& options,
                                           double hbm_bytes_per_second);

std::string format_part_sum_header();
std::string format_part_sum_row(const PartSumRow& row);
nlohmann::json part_sum_row_to_json(const PartSumRow& row);

}  // namespace kiln::benchmarks
