// The rows of `kiln reduce bench`: a row that ran keeps the columns it always had, a row whose
// variant (or CUB) failed at a size shows "-" in them and its failure at the end, in the table and
// in the JSON.
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "benchmarks/reduce/reduce_bench.hpp"

namespace {

using kiln::benchmarks::ReduceResult;

ReduceResult ran_row() {
  ReduceResult r;
  r.variant = "vec";
  r.knobs = "block=256";
  r.size = 10000013;
  r.us.median = 21.5;
  r.us.min = 20.25;
  r.us.max = 30.0;
  r.us.cv = 0.031;
  r.gbps = 1860.4;
  r.copy_fraction = 0.62;
  r.cub_over_this = 1.125;
  r.error = 0.0;
  r.correct = true;
  return r;
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

TEST(ReduceBenchRows, ARowThatRanKeepsItsColumns) {
  const ReduceResult r = ran_row();
  // The printf format the table used before rows could fail: a row that ran reads the same.
  char expected[256];
  std::snprintf(expected, sizeof expected,
                "%12lld %-11s %10.2f %10.2f %10.2f %6.1f %9.1f %6.1f%% %8.3f %9.2e %s",
                static_cast<long long>(r.size), r.variant.c_str(), r.us.median, r.us.min, r.us.max,
                100.0 * r.us.cv, r.gbps, 100.0 * r.copy_fraction, r.cub_over_this, r.error, "yes");
  EXPECT_EQ(kiln::benchmarks::format_reduce_row(r), expected);
}

TEST(ReduceBenchRows, HeaderEndsWithTheNoteColumn) {
  const std::vector<std::string> header = words(kiln::benchmarks::reduce_table_header());
  ASSERT_EQ(header.size(), 12u);
  EXPECT_EQ(header.front(), "size");
  EXPECT_EQ(header[10], "ok");
  EXPECT_EQ(header.back(), "note");
  // Every column of the header lines up with the row's (right edges of the right-aligned ones).
  const std::string head = kiln::benchmarks::reduce_table_header();
  const std::string row = kiln::benchmarks::format_reduce_row(ran_row());
  EXPECT_EQ(head.find("median") + 6, row.find("21.50") + 5);
  EXPECT_EQ(head.find("cub/this") + 8, row.find("1.125") + 5);
}

TEST(ReduceBenchRows, AFailedRowShowsDashesAndItsFailureAtTheEnd) {
  ReduceResult r;
  r.variant = "cub";
  r.size = 3000000000;
  r.failure = "CUDA call dispatch(...) failed at x.cu:1: cudaErrorInvalidValue (invalid argument)";
  const std::string line = kiln::benchmarks::format_reduce_row(r);
  const std::vector<std::string> w = words(line);
  ASSERT_GE(w.size(), 12u);
  EXPECT_EQ(w[0], "3000000000");
  EXPECT_EQ(w[1], "cub");
  for (std::size_t i = 2; i <= 10; ++i) EXPECT_EQ(w[i], "-") << "column " << i << ": " << line;
  const std::string note = "did not run: " + r.failure;
  ASSERT_GE(line.size(), note.size());
  EXPECT_EQ(line.substr(line.size() - note.size()), note);
  // Same width as a row that ran, up to the note.
  const std::string ran = kiln::benchmarks::format_reduce_row(ran_row());
  EXPECT_EQ(line.find(" - did not run"), ran.find(" yes"));
}

TEST(ReduceBenchRows, NoRatioWhenCubDidNotRun) {
  ReduceResult r = ran_row();
  r.cub_over_this = 0.0;  // what the bench leaves when the CUB row of this size failed
  const std::vector<std::string> w = words(kiln::benchmarks::format_reduce_row(r));
  ASSERT_EQ(w.size(), 11u);
  EXPECT_EQ(w[8], "-");
  EXPECT_EQ(w[10], "yes");
}

TEST(ReduceBenchRows, JsonCarriesTheFailure) {
  kiln::benchmarks::ReduceBenchReport report;
  report.results.push_back(ran_row());
  ReduceResult failed;
  failed.variant = "cub";
  failed.size = 3000000000;
  failed.failure = "out of memory";
  report.results.push_back(failed);
  const nlohmann::json j = kiln::benchmarks::to_json(kiln::benchmarks::ReduceBenchOptions{}, report);
  ASSERT_EQ(j["results"].size(), 2u);
  EXPECT_EQ(j["results"][0]["failure"], "");
  EXPECT_EQ(j["results"][0]["correct"], true);
  EXPECT_EQ(j["results"][1]["failure"], "out of memory");
  EXPECT_EQ(j["results"][1]["correct"], false);
  EXPECT_EQ(j["results"][1]["size"], 3000000000);
}

}  // namespace
