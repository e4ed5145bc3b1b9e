// The suite's SVG roofline plot and the JSON round trip it is drawn from, without a GPU.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "bench/suite.hpp"
#include "bench/suite_plot.hpp"
#include "core/error.hpp"

namespace kiln::bench {
namespace {

SuiteRow row(const std::string& problem, double u, const std::string& binding, bool correct) {
  SuiteRow r;
  r.problem = problem;
  r.size = "1M";
  r.solution = "kiln-nvlink";
  r.utilization = u;
  r.binding = binding;
  r.correct = correct;
  r.speedup = 1.5;
  r.reference_us.median = 15;
  r.solution_us.median = 10;
  return r;
}

TEST(SuitePlot, OneBarPerRowHeightIsUColourIsTheBinding) {
  SuiteRow skipped = row("d", 0.9, "memory", false);
  skipped.skipped = "blocks are not whole vectors";
  const std::vector<SuiteRow> rows = {row("a<b", 0.5, "interconnect", true),
                                      row("b", 1.7, "memory", true),
                                      row("c", 0.25, "compute", false), skipped};
  const std::string svg = suite_svg(rows, "t & t");
  const std::regex bar(
      "<rect class=\"bar\" x=\"\\d+\" y=\"\\d+\" width=\"\\d+\" height=\"(\\d+)\" "
      "fill=\"(#[0-9a-f]{6})\"");
  std::vector<std::pair<int, std::string>> bars;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), bar); it != std::sregex_iterator();
       ++it) {
    bars.emplace_back(std::stoi((*it)[1]), (*it)[2]);
  }
  ASSERT_EQ(bars.size(), 3u);     // the skipped row was not measured: no bar
  EXPECT_EQ(bars[0].first, 150);  // U 0.5 of a 300-pixel axis
  EXPECT_EQ(bars[1].first, 300);  // U is capped at 1
  EXPECT_EQ(bars[0].second, "#2ca02c");
  EXPECT_EQ(bars[1].second, "#1f77b4");
  EXPECT_EQ(bars[2].second, "#bbbbbb");  // failed: grey, whatever binds it
  EXPECT_NE(svg.find("a&lt;b 1M"), std::string::npos);
  EXPECT_NE(svg.find("t &amp; t"), std::string::npos);
  EXPECT_EQ(svg.find("a<b"), std::string::npos);
}

TEST(SuitePlot, RowsSurviveTheJsonRoundTrip) {
  nlohmann::json suite;
  suite["rows"] = nlohmann::json::array();
  SuiteRow original = row("allgather", 0.4, "interconnect", true);
  original.reference_check = "rank 1: wrong";
  original.reference_steady_us.median = 25;
  suite["rows"].push_back(suite_row_to_json(original));
  EXPECT_DOUBLE_EQ(suite["rows"][0]["speedup_steady"].get<double>(), 2.5);  // 25 / 10
  // Not timed back to back (an outside candidate): no back-to-back speedup.
  EXPECT_DOUBLE_EQ(suite["rows"][0]["speedup_back_to_back"].get<double>(), 0.0);
  original.solution_steady_us.median = 8;
  const nlohmann::json steady = suite_row_to_json(original);
  EXPECT_DOUBLE_EQ(steady["solution_steady_us"]["median"].get<double>(), 8.0);
  EXPECT_DOUBLE_EQ(steady["speedup_back_to_back"].get<double>(), 25.0 / 8.0);
  const std::vector<SuiteRow> back = suite_rows_from_json(suite);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].problem, "allgather");
  EXPECT_EQ(back[0].reference_check, "rank 1: wrong");
  EXPECT_DOUBLE_EQ(back[0].utilization, 0.4);
  EXPECT_DOUBLE_EQ(back[0].solution_us.median, 10);
  EXPECT_THROW(suite_rows_from_json(nlohmann::json::object()), UsageError);
}

}  // namespace
}  // namespace kiln::bench
