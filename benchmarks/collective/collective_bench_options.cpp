// Validation and size arithmetic of the collective bench: host logic, unit-tested without a GPU.
#include <fmt/format.h>

#include "benchmarks/collective/bus_bandwidth.hpp"
#include "benchmarks/collective/collective_bench.hpp"
#include "core/error.hpp"
#include "core/table.hpp"

namespace kiln::benchmarks {

void validate(const CollectiveBenchOptions& o, int visible_gpus) {
  KILN_REQUIRE(o.world_size >= 1, fmt::format("-g {}: must be at least 1", o.world_size));
  KILN_REQUIRE(o.min_bytes >= 1, "-b 0: the smallest size must be at least 1 byte");
  KILN_REQUIRE(o.max_bytes >= o.min_bytes,
               fmt::format("-e {}: the largest size must be at least -b ({} bytes)", o.max_bytes,
                           o.min_bytes));
  KILN_REQUIRE(o.max_bytes <= (1ull << 40), fmt::format("-e {}: at most 1T", o.max_bytes));
  KILN_REQUIRE(o.factor >= 2 || o.min_bytes == o.max_bytes,
               fmt::format("-f {}: the size factor must be at least 2", o.factor));
  KILN_REQUIRE(o.warmup >= 0 && o.warmup <= 100000,
               fmt::format("-w {}: warm-up iterations must be in 0..100000", o.warmup));
  KILN_REQUIRE(o.iterations >= 1 && o.iterations <= 100000,
               fmt::format("-n {}: iterations must be in 1..100000", o.iterations));
  KILN_REQUIRE(o.check == 0 || o.check == 1, fmt::format("-c {}: must be 0 or 1", o.check));
  KILN_REQUIRE(o.timeout_seconds > 0 && o.timeout_seconds <= 86400,
               fmt::format("--timeout {}: must be in (0, 86400] seconds", o.timeout_seconds));
  KILN_REQUIRE(
      o.debug_hang_rank < o.world_size,
      fmt::format("--debug-hang-rank {}: must be below -g {}", o.debug_hang_rank, o.world_size));
  const comm::CollectiveCounts smallest =
      comm::counts_for(o.op, o.min_bytes, core::dtype_size(o.dtype), o.world_size);
  KILN_REQUIRE(
      smallest.block_count > 0,
      fmt::format("-b {}: too small for {} {} on {} rank(s); need at least {} bytes", o.min_bytes,
                  comm::op_name(o.op), core::dtype_name(o.dtype), o.world_size,
                  core::dtype_size(o.dtype) * (comm::splits_into_blocks(o.op) ? o.world_size : 1)));
  // Last, so that flag mistakes are reported the same way on machines without GPUs.
  if (visible_gpus >= 0) {
    KILN_REQUIRE(visible_gpus > 0,
                 fmt::format("-g {}: no CUDA GPU is visible on this host", o.world_size));
    KILN_REQUIRE(o.world_size <= visible_gpus,
                 fmt::format("-g {}: this host has {} visible GPU(s); accepted range 1..{}",
                             o.world_size, visible_gpus, visible_gpus));
  }
}

std::vector<std::uint64_t> message_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes,
                                         std::uint64_t factor) {
  std::vector<std::uint64_t> sizes;
  if (min_bytes == 0 || max_bytes < min_bytes) return sizes;
  for (std::uint64_t size = min_bytes; size <= max_bytes;) {
    sizes.push_back(size);
    if (factor < 2 || size > max_bytes / factor) break;
    size *= factor;
  }
  return sizes;
}

namespace {

// nccl-tests' columns, with min, max and cv beside the median time.
const core::Table& collective_table() {
  static const core::Table table({{"size", 12, false, "(B)"},
                                  {"count", 13, false, "(elements)"},
                                  {"type", 6},
                                  {"redop", 6},
                                  {"root", 5},
                                  {"time", 10, false, "(us)"},
                                  {"min", 10, false, "(us)"},
                                  {"max", 10, false, "(us)"},
                                  {"cv", 6, false, "(%)"},
                                  {"algbw", 8, false, "(GB/s)"},
                                  {"busbw", 8, false, "(GB/s)"},
                                  {"#wrong", 7}},
                                 "# ", "  ");
  return table;
}

}  // namespace

std::string format_table_header(const CollectiveBenchOptions&) {
  return "#\n" + collective_table().header();
}

std::string format_row(const CollectiveBenchOptions& o, const CollectiveRow& row) {
  const bool reduces = o.op == comm::CollectiveOp::kAllReduce ||
                       o.op == comm::CollectiveOp::kReduceScatter ||
                       o.op == comm::CollectiveOp::kReduce;
  const bool rooted = o.op == comm::CollectiveOp::kBroadcast || o.op == comm::CollectiveOp::kReduce;
  return collective_table().row(
      {std::to_string(row.counts.bytes), std::to_string(row.counts.total_count),
       core::dtype_name(o.dtype), reduces ? "sum" : "none",
       rooted ? std::to_string(comm::kRootRank) : "-1", fmt::format("{:.2f}", row.time_us.median),
       fmt::format("{:.2f}", row.time_us.min), fmt::format("{:.2f}", row.time_us.max),
       fmt::format("{:.1f}", 100.0 * row.time_us.cv), fmt::format("{:.2f}", row.algbw_gbps),
       fmt::format("{:.2f}", row.busbw_gbps),
       row.checked ? std::to_string(row.wrong) : std::string("N/A")});
}

nlohmann::json row_to_json(const CollectiveRow& row) {
  nlohmann::json value;
  value["bytes"] = row.counts.bytes;
  value["count"] = row.counts.total_count;
  value["send_count"] = row.counts.send_count;
  value["recv_count"] = row.counts.recv_count;
  value["time_us"] = {{"median", row.time_us.median}, {"min", row.time_us.min},
                      {"max", row.time_us.max},       {"mean", row.time_us.mean},
                      {"cv", row.time_us.cv},         {"iterations", row.time_us.count}};
  value["algbw_gbps"] = row.algbw_gbps;
  value["busbw_gbps"] = row.busbw_gbps;
  value["checked"] = row.checked;
  value["wrong"] = row.wrong;
  return value;
}

}  // namespace kiln::benchmarks
