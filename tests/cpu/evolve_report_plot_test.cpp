// The evolution engine's plots without a GPU: the search path of a recorded run (run 5's 1e8
// ladder, docs/results/2026-11-24-evolve/) and the exported kernels' roofline rows.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "bench/suite_plot.hpp"
#include "evolve/report_plot.hpp"

namespace kiln::evolve {
namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

nlohmann::json entry(double us, bool correct, const std::vector<std::string>& strategies) {
  nlohmann::json genome = {
      {"family", "reduce-axis"}, {"strategies", strategies}, {"knobs", nlohmann::json::object()}};
  return {{"genome", genome},
          {"evaluation",
           {{"correct", correct},
            {"us", us},
            {"roof_us", 100.0},
            {"binding", "memory"},
            {"failure", correct ? "" : "wrong"}}},
          {"origin", "mutation"},
          {"generation", 1}};
}

// Each improvement of the best accepted U is a point labelled with the strategies that entered;
// rejected kernels never raise the line, however fast.
TEST(EvolveReportPlot, ProgressMarksEachImprovementWithTheStrategiesThatEntered) {
  nlohmann::json log = nlohmann::json::array();
  log.push_back(entry(400.0, true, {"block-tiles", "shared-tree"}));
  log.push_back(entry(50.0, false, {"block-tiles", "shared-tree", "warp-shuffle"}));  // rejected
  log.push_back(entry(500.0, true, {"block-tiles", "scalar-loads"}));                 // slower
  log.push_back(entry(200.0, true, {"block-tiles", "shared-tree", "atomic-combine"}));
  log.push_back(entry(125.0, true, {"block-tiles", "atomic-combine", "warp-shuffle"}));
  const std::string svg = progress_svg(log, "a <run> & its path");
  EXPECT_EQ(count(svg, "class=\"improvement\""), 3u) << svg;
  EXPECT_NE(svg.find("+atomic-combine"), std::string::npos);
  EXPECT_NE(svg.find("+warp-shuffle -shared-tree"), std::string::npos);
  EXPECT_NE(svg.find("U 0.800"), std::string::npos);  // 100 / 125
  EXPECT_EQ(svg.find("U 2.000"), std::string::npos);  // the rejected 50 us kernel
  EXPECT_NE(svg.find("a &lt;run&gt; &amp; its path"), std::string::npos);
  EXPECT_NE(svg.find("<polyline"), std::string::npos);
  EXPECT_EQ(svg.rfind("</svg>\n"), svg.size() - 7);
}

TEST(EvolveReportPlot, ARunWithNothingAcceptedSaysSo) {
  nlohmann::json log = nlohmann::json::array();
  log.push_back(entry(10.0, false, {"block-tiles"}));
  const std::string svg = progress_svg(log, "t");
  EXPECT_NE(svg.find("no accepted kernel in 1 evaluations"), std::string::npos);
  EXPECT_EQ(svg.find("<polyline"), std::string::npos);
  EXPECT_NE(progress_svg(nlohmann::json::array(), "t").find("no accepted kernel in 0"),
            std::string::npos);
}

// The recorded ladder run reaches U 0.932 (evaluation 135) and its path names the strategies.
TEST(EvolveReportPlot, RecordedLadderRunsPathEndsAtItsBest) {
  const std::filesystem::path log_path = std::filesystem::path(KILN_TEST_SOURCE_DIR) /
                                         "docs/results/2026-11-24-evolve/h100-run5/ladder-1e8/"
                                         "log.json";
  const nlohmann::json log = nlohmann::json::parse(std::ifstream(log_path));
  const std::string svg = progress_svg(log, "ladder 1e8");
  EXPECT_NE(svg.find("#135 U 0.932"), std::string::npos) << svg;
  EXPECT_NE(svg.find("+atomic-combine"), std::string::npos);
  EXPECT_GE(count(svg, "class=\"improvement\""), 5u);
}

TEST(EvolveReportPlot, ExportedKernelsBecomeRooflineBarsWithoutAReferenceTime) {
  ExportedKernel k;
  k.problem = "reduce-sum-int32";
  k.size = "1e8";
  k.fitness = 0.93;
  k.us = 128.5;
  k.roof_us = 119.4;
  k.binding = "memory";
  const auto rows = roofline_rows({k});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(rows[0].correct);
  EXPECT_DOUBLE_EQ(rows[0].utilization, 0.93);
  const std::string svg = bench::suite_svg(rows, "roofline");
  EXPECT_NE(svg.find("reduce-sum-int32 1e8 evolved: U 0.930, memory"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("x the reference"), std::string::npos);
}

}  // namespace
}  // namespace kiln::evolve
