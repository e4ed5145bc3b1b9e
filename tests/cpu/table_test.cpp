// The one table printer, and every benchmark's table through it printing exactly what its own
// format string printed before (the strings below are those formats, kept as the oracle), except
// for trailing blanks, which rows no longer end with.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "bench/suite.hpp"
#include "benchmarks/collective/collective_bench.hpp"
#include "benchmarks/overlap/overlap_bench.hpp"
#include "benchmarks/overlap/part_sum_bench.hpp"
#include "core/error.hpp"
#include "core/table.hpp"

namespace kiln {
namespace {

// The old formats' output without trailing blanks, line by line (a header holds two lines).
std::string rstrip(const std::string& text) {
  std::string out, line;
  for (char c : text + '\n') {
    if (c != '\n') {
      line += c;
      continue;
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + '\n';
    line.clear();
  }
  out.pop_back();
  return out;
}

core::TimingStats stats(double median, double min = 0, double max = 0, double cv = 0) {
  core::TimingStats t;
  t.median = median;
  t.min = min;
  t.max = max;
  t.cv = cv;
  return t;
}

TEST(Table, AlignsPadsAndLeavesFreeTextAsItIs) {
  const core::Table t({{"name", 6, true}, {"value", 7}, {"note"}}, "# ", "  ");
  EXPECT_EQ(t.header(), "# name     value note");
  EXPECT_EQ(t.row({"ab", "1.5", "hello"}), "  ab         1.5 hello");
  EXPECT_EQ(t.row({"ab", "1.5", ""}), "  ab         1.5");  // an empty last note adds nothing
  EXPECT_EQ(t.row({"ab", "skipped"}), "  ab     skipped");  // a short row's last cell as is
  EXPECT_THROW(t.row({"a", "b", "c", "d"}), Error);
  const core::Table units({{"size", 6, false, "(B)"}, {"time", 6, false, "(us)"}});
  EXPECT_EQ(units.header(), "  size   time\n   (B)   (us)");
}

TEST(Table, SuiteRowsAsTheirFormatPrintedThem) {
  bench::SuiteRow r;
  r.problem = "tp-gemm-reducescatter";
  r.category = "tensor-parallel";
  r.size = "4096x8192x2048";
  r.solution = "kiln-overlap";
  r.correct = true;
  r.reference_us = stats(434.9);
  r.solution_us = stats(281.8);
  r.speedup = 1.543;
  r.roof_us = 138.9;
  r.utilization = 0.493;
  r.binding = "compute";
  EXPECT_EQ(
      bench::format_suite_row(r),
      rstrip(fmt::format("{:<22} {:<13} {:>7} {:<17} {:>4} {:>11.2f} {:>11.2f} {:>8.3f} {:>9.2f} "
                         "{:>6.3f} {:<12} {}",
                         r.problem, r.category.substr(0, 13), r.size, r.solution, "yes", 434.9,
                         281.8, 1.543, 138.9, 0.493, "compute", "")));
  r.skipped = "needs 4 ranks";
  EXPECT_EQ(bench::format_suite_row(r),
            rstrip(fmt::format("{:<22} {:<13} {:>7} {:<17} {:>4} {}", r.problem, "tensor-parall",
                               r.size, r.solution, "-", "skipped: needs 4 ranks")));
  EXPECT_EQ(
      bench::format_suite_header(),
      fmt::format("{:<22} {:<13} {:>7} {:<17} {:>4} {:>11} {:>11} {:>8} {:>9} {:>6} {:<12} {}",
                  "problem", "category", "size", "solution", "ok", "ref us", "sol us", "speedup",
                  "roof us", "U", "binding", "note"));
}

TEST(Table, OverlapRowsAsTheirFormatPrintedThem) {
  benchmarks::OverlapRow r;
  r.shape = {4096, 8192, 8192};
  r.cublas_us = stats(760.1);
  r.comm_us = stats(201.5);
  r.serial_us = stats(961.6);
  r.decomposition_us = stats(900.2);
  r.kiln_us = stats(812.3);
  r.kiln_no_reorder_us = stats(790.4);
  r.bound_us = 760.1;
  r.speedup_vs_serial = 1.184;
  r.speedup_vs_decomposition = 1.108;
  r.fraction_of_bound = 0.936;
  r.relative_error = 1.2e-3;
  r.plan = "tile=128x256 cap=0 comm=ce groups=each";
  // No contiguous-row variant: its column says so.
  EXPECT_EQ(benchmarks::format_overlap_row(r),
            fmt::format("{:>18} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9} "
                        "{:>9.1f} {:>8.3f} {:>8.3f} {:>6.1f}% {:>9.2e} {}",
                        "4096x8192x8192", 760.1, 201.5, 961.6, 900.2, 812.3, 790.4, "-", 760.1,
                        1.184, 1.108, 93.6, 1.2e-3, r.plan));
  r.has_contiguous = true;
  r.kiln_contiguous_us = stats(801.7);
  EXPECT_NE(benchmarks::format_overlap_row(r).find(" 801.7 "), std::string::npos);
}

TEST(Table, OverlapDetailsNameTheFastestPlanOfEachTransport) {
  benchmarks::OverlapRow r;
  r.describe = "plan";
  // One transport: nothing to compare, no line.
  r.sweep = {{"tile=128x256 cap=0 comm=ce groups=each", 900.0},
             {"tile=128x256 cap=128 comm=ce groups=each", 880.0}};
  EXPECT_EQ(benchmarks::format_overlap_row_details(r, false).find("fastest of each transport"),
            std::string::npos);
  r.sweep.push_back({"tile=128x256 cap=128 comm=ce2 groups=each", 850.0});
  r.sweep.push_back({"tile=128x256 cap=0 comm=ce2 groups=each", 990.0});
  const std::string details = benchmarks::format_overlap_row_details(r, false);
  EXPECT_NE(details.find("fastest of each transport: ce 880.0 us (tile=128x256 cap=128 "),
            std::string::npos)
      << details;
  EXPECT_NE(details.find("ce2 850.0 us (tile=128x256 cap=128 "), std::string::npos) << details;
  const nlohmann::json j = benchmarks::overlap_row_to_json(r);
  EXPECT_DOUBLE_EQ(j["sweep_fastest_per_transport"]["ce2"]["us"].get<double>(), 850.0);
  EXPECT_DOUBLE_EQ(j["sweep_fastest_per_transport"]["ce"]["us"].get<double>(), 880.0);
}

TEST(Table, OverlapChoiceOfAlgorithmIsTheFastestProbeAndItsOwnFigures) {
  using benchmarks::PlanTime;
  EXPECT_THROW(benchmarks::fastest_candidate({}), std::invalid_argument);
  EXPECT_EQ(benchmarks::fastest_candidate({{benchmarks::kChoicePlan, 900.0}}), 0u);
  // The fastest probe wins wherever it stands; of equals the first (the plan) is kept.
  EXPECT_EQ(benchmarks::fastest_candidate({{benchmarks::kChoicePlan, 900.0},
                                           {benchmarks::kChoiceContiguous, 910.0},
                                           {benchmarks::kChoiceChunked, 850.0}}),
            2u);
  EXPECT_EQ(benchmarks::fastest_candidate(
                {{benchmarks::kChoicePlan, 850.0}, {benchmarks::kChoiceChunked, 850.0}}),
            0u);

  benchmarks::OverlapRow r;
  r.describe = "plan";
  r.kiln_us = stats(931.7);
  EXPECT_EQ(benchmarks::format_overlap_row_details(r, true).find("kiln's choice"),
            std::string::npos);
  EXPECT_FALSE(benchmarks::overlap_row_to_json(r).contains("choice"));
  // The reported figures are the final rounds' (choice_us), not the probe's.
  r.choice = benchmarks::kChoiceChunked;
  r.choice_probe = {{benchmarks::kChoicePlan, 940.2}, {benchmarks::kChoiceChunked, 891.0}};
  r.choice_us = stats(888.5);
  r.speedup_choice_vs_serial = 1.136;
  r.fraction_of_bound_choice = 0.912;
  const std::string details = benchmarks::format_overlap_row_details(r, true);
  EXPECT_NE(details.find("kiln's choice: chunked, 888.5 us, x1.136 vs serial, 91.2% of the bound "
                         "(probe: plan 940.2 us; chunked 891.0 us;"),
            std::string::npos)
      << details;
  const nlohmann::json j = benchmarks::overlap_row_to_json(r);
  EXPECT_EQ(j["choice"], "chunked");
  EXPECT_DOUBLE_EQ(j["choice_us"]["median"].get<double>(), 888.5);
  EXPECT_DOUBLE_EQ(j["choice_probe_us"]["plan"].get<double>(), 940.2);
  EXPECT_DOUBLE_EQ(j["speedup_choice_vs_serial"].get<double>(), 1.136);
}

TEST(Table, PartSumRowsAndTheirChecks) {
  benchmarks::PartSumBenchOptions o;
  EXPECT_NO_THROW(benchmarks::validate(o));
  const auto refused = [&](auto change) {
    benchmarks::PartSumBenchOptions bad = o;
    change(bad);
    EXPECT_THROW(benchmarks::validate(bad), UsageError);
  };
  refused([](auto& b) { b.parts = {9}; });
  refused([](auto& b) { b.parts = {}; });
  refused([](auto& b) { b.part_bytes = {24}; });
  refused([](auto& b) { b.ctas_per_sm = {0}; });
  refused([](auto& b) { b.dtype = core::DType::kFp32; });
  refused([](auto& b) { b.rounds = b.iterations + 1; });
  // Four parts of 32 MiB read and one written: 160 MiB.
  EXPECT_DOUBLE_EQ(benchmarks::part_sum_hbm_bytes(4, 32u << 20), 5.0 * (32u << 20));
  benchmarks::PartSumRow r;
  r.parts = 4;
  r.part_bytes = 32u << 20;
  r.ctas_per_sm = 8;
  r.buffer_sets = 1;
  r.us = stats(41.2, 40.1);
  r.gb_per_second = 4072.0;
  r.fraction_of_hbm = 0.848;
  const std::string row = benchmarks::format_part_sum_row(r);
  EXPECT_NE(row.find("32 MiB"), std::string::npos) << row;
  EXPECT_NE(row.find("84.8%"), std::string::npos) << row;
  EXPECT_NE(row.find("same"), std::string::npos) << row;
  r.same_bits_as_first = false;
  r.fraction_of_hbm = 0.0;  // no ceiling known
  EXPECT_NE(benchmarks::format_part_sum_row(r).find("DIFFER"), std::string::npos);
  const nlohmann::json j = benchmarks::part_sum_row_to_json(r);
  EXPECT_DOUBLE_EQ(j["us"]["median"].get<double>(), 41.2);
  EXPECT_FALSE(j["same_bits_as_first"].get<bool>());
}

TEST(Table, CollectiveRowsAsTheirFormatPrintedThem) {
  benchmarks::CollectiveBenchOptions o;
  o.op = comm::CollectiveOp::kAllReduce;
  o.dtype = core::DType::kBf16;
  benchmarks::CollectiveRow row;
  row.counts.bytes = 1048576;
  row.counts.total_count = 524288;
  row.time_us = stats(14.21, 13.9, 15.02, 0.031);
  row.algbw_gbps = 73.8;
  row.busbw_gbps = 73.8;
  row.checked = true;
  row.wrong = 0;
  EXPECT_EQ(
      benchmarks::format_row(o, row),
      fmt::format("  {:>12} {:>13} {:>6} {:>6} {:>5} {:>10.2f} {:>10.2f} {:>10.2f} "
                  "{:>6.1f} {:>8.2f} {:>8.2f} {:>7}",
                  1048576, 524288, "bf16", "sum", "-1", 14.21, 13.9, 15.02, 3.1, 73.8, 73.8, "0"));
  EXPECT_EQ(
      benchmarks::format_table_header(o),
      rstrip(fmt::format("#\n# {:>12} {:>13} {:>6} {:>6} {:>5} {:>10} {:>10} {:>10} {:>6} {:>8} "
                         "{:>8} {:>7}\n",
                         "size", "count", "type", "redop", "root", "time", "min", "max", "cv",
                         "algbw", "busbw", "#wrong") +
             fmt::format("# {:>12} {:>13} {:>6} {:>6} {:>5} {:>10} {:>10} {:>10} {:>6} {:>8} "
                         "{:>8} {:>7}",
                         "(B)", "(elements)", "", "", "", "(us)", "(us)", "(us)", "(%)", "(GB/s)",
                         "(GB/s)", "")));
}

}  // namespace
}  // namespace kiln
