// The problem-set summary of `kiln evolve set` (issue 20's yardstick) on recorded run folders: a
// finished run (report.json), a run cut before its report (log.json only), a run that found no
// accepted kernel, and a folder with nothing; the aggregates count the losers (U 0 in the median)
// and the speedup and headroom only where PyTorch eager's time is known.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "evolve/genome.hpp"
#include "evolve/search.hpp"
#include "evolve/set_summary.hpp"

namespace kiln::evolve {
namespace {

nlohmann::json evaluation(bool correct, double us, double roof_us) {
  Evaluation e;
  e.correct = correct;
  e.us = us;
  e.roof_us = roof_us;
  e.binding = "memory";
  if (!correct) e.failure = "wrong";
  return e.to_json();
}

Genome map_genome() {
  Genome g;
  g.family = Family::kMap;
  g.strategies = {"scalar-loads", "grid-stride"};
  return g;
}

TEST(EvolveSetSummary, RowsFromRunFoldersAndTheAggregates) {
  const std::filesystem::path root =
      std::filesystem::path(::testing::TempDir()) / "kiln_evolve_set_summary";
  std::filesystem::remove_all(root);
  for (const char* d : {"done", "cut", "lost", "empty"})
    std::filesystem::create_directories(root / d);
  // done: U 0.8 (80 us against a 64 us roof), 20 evaluations in 10 s.
  std::ofstream(root / "done" / "report.json") << nlohmann::json{
      {"evaluations", 20},
      {"seconds", 10.0},
      {"best",
       {{"genome", map_genome().to_json()},
        {"evaluation",
         evaluation(true, 80.0, 64.0)}}}}.dump();
  // cut: a log of two, the better U 0.5.
  nlohmann::json log = nlohmann::json::array();
  log.push_back(
      {{"genome", map_genome().to_json()}, {"evaluation", evaluation(true, 200.0, 100.0)}});
  log.push_back(
      {{"genome", map_genome().to_json()}, {"evaluation", evaluation(false, 0.0, 100.0)}});
  std::ofstream(root / "cut" / "log.json") << log.dump();
  std::ofstream(root / "lost" / "report.json") << nlohmann::json{
      {"evaluations", 5},
      {"seconds", 5.0},
      {"best",
       {{"genome", map_genome().to_json()},
        {"evaluation",
         evaluation(false, 0.0, 50.0)}}}}.dump();

  const SetRow done = set_row_from_run("p-done", (root / "done").string(), 160.0);
  EXPECT_TRUE(done.accepted);
  EXPECT_NEAR(done.best_u, 0.8, 1e-12);
  EXPECT_TRUE(done.error.empty());
  const SetRow cut = set_row_from_run("p-cut", (root / "cut").string(), std::nullopt);
  EXPECT_TRUE(cut.accepted);
  EXPECT_NEAR(cut.best_u, 0.5, 1e-12);
  EXPECT_EQ(cut.evaluations, 2);
  EXPECT_NE(cut.error.find("cut before its report"), std::string::npos);
  const SetRow lost = set_row_from_run("p-lost", (root / "lost").string(), 100.0);
  EXPECT_FALSE(lost.accepted);
  const SetRow empty = set_row_from_run("p-empty", (root / "empty").string(), std::nullopt);
  EXPECT_FALSE(empty.accepted);
  EXPECT_NE(empty.error.find("no report.json"), std::string::npos);

  const nlohmann::json s = summarize_set({done, cut, lost, empty});
  EXPECT_EQ(s.at("problems").get<int>(), 4);
  EXPECT_EQ(s.at("accepted").get<int>(), 2);
  EXPECT_NEAR(s.at("median_u").get<double>(), 0.25, 1e-12);  // 0, 0, 0.5, 0.8
  EXPECT_NEAR(s.at("geomean_u_accepted").get<double>(), std::sqrt(0.8 * 0.5), 1e-12);
  EXPECT_NEAR(s.at("share_u_at_least_0.8").get<double>(), 0.25, 1e-12);
  // Only "done" has both eager and an accepted kernel: 2x of a 2.5x headroom.
  EXPECT_NEAR(s.at("geomean_speedup_over_eager").get<double>(), 2.0, 1e-12);
  EXPECT_NEAR(s.at("share_of_headroom").get<double>(), 0.8, 1e-12);
  EXPECT_EQ(s.at("evaluations").get<int>(), 27);
  const std::string md = summary_markdown(s);
  EXPECT_NE(md.find("| p-lost | none accepted |"), std::string::npos);
  EXPECT_NE(md.find("| p-done | 0.800 | 80.0 | 64.0 | 160.0 | 2.00x | 2.50x | 20 |"),
            std::string::npos);
  EXPECT_NE(md.find("4 problems, 2 with an accepted kernel"), std::string::npos);
}

// `kiln evolve summary`: a set folder read back, with the problems it never reached listed.
TEST(EvolveSetSummary, AFolderGivesEveryProblemARowIncludingTheUnrun) {
  const std::filesystem::path root =
      std::filesystem::path(::testing::TempDir()) / "kiln_evolve_set_folder";
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root / "p-done");
  std::filesystem::create_directories(root / "p-started");
  std::ofstream(root / "p-done" / "report.json") << nlohmann::json{
      {"evaluations", 16},
      {"seconds", 8.0},
      {"best",
       {{"genome", map_genome().to_json()},
        {"evaluation", evaluation(true, 50.0, 40.0)}}}}.dump();
  const std::vector<SetRow> rows = set_rows_from_folder(
      root.string(), {"p-done", "p-started", "p-unrun"}, {{"p-done", 100.0}, {"p-unrun", 7.0}});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_TRUE(rows[0].accepted);
  EXPECT_NEAR(rows[0].best_u, 0.8, 1e-12);
  ASSERT_TRUE(rows[0].eager_us.has_value());
  EXPECT_DOUBLE_EQ(*rows[0].eager_us, 100.0);
  EXPECT_FALSE(rows[1].accepted);
  EXPECT_EQ(rows[1].error, "started, cut before its first evaluation");
  EXPECT_FALSE(rows[2].accepted);
  EXPECT_EQ(rows[2].error, "not run");
  const nlohmann::json s = summarize_set(rows);
  EXPECT_EQ(s.at("problems").get<int>(), 3);
  EXPECT_EQ(s.at("accepted").get<int>(), 1);
  EXPECT_NEAR(s.at("median_u").get<double>(), 0.0, 1e-12);  // 0, 0, 0.8
  EXPECT_NE(summary_markdown(s).find("| p-unrun | none accepted |"), std::string::npos);
}

// A done problem resumed at a larger budget and cut before its new report: its longer log, not
// the old report, is what it reached.
TEST(EvolveSetSummary, ALogLongerThanItsReportIsACutResume) {
  const std::filesystem::path root =
      std::filesystem::path(::testing::TempDir()) / "kiln_evolve_set_resumed";
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root);
  std::ofstream(root / "report.json") << nlohmann::json{
      {"evaluations", 1},
      {"seconds", 1.0},
      {"best",
       {{"genome", map_genome().to_json()},
        {"evaluation",
         evaluation(true, 200.0, 100.0)}}}}.dump();
  nlohmann::json log = nlohmann::json::array();
  log.push_back(
      {{"genome", map_genome().to_json()}, {"evaluation", evaluation(true, 200.0, 100.0)}});
  log.push_back(
      {{"genome", map_genome().to_json()}, {"evaluation", evaluation(true, 125.0, 100.0)}});
  std::ofstream(root / "log.json") << log.dump();
  const SetRow row = set_row_from_run("p", root.string(), std::nullopt);
  EXPECT_EQ(row.evaluations, 2);
  EXPECT_NEAR(row.best_u, 0.8, 1e-12);
  EXPECT_NE(row.error.find("cut before its report"), std::string::npos);
}

// The issue reports per family: each family's aggregates come from its own rows only.
TEST(EvolveSetSummary, FamiliesAreSummarisedApart) {
  const auto row = [](const char* problem, double u, std::optional<double> eager) {
    SetRow r;
    r.problem = problem;
    r.accepted = u > 0;
    r.best_u = u;
    r.roof_us = 100.0;
    r.best_us = u > 0 ? 100.0 / u : 0.0;
    r.eager_us = eager;
    r.evaluations = 10;
    r.seconds = 5.0;
    return r;
  };
  std::vector<SetRow> rows = {row("kb1-19-relu", 0.9, 200.0), row("kb1-20-leaky-relu", 0.7, 140.0),
                              row("kb1-23-softmax", 0.5, 400.0),
                              row("kb1-24-log-softmax", 0.0, std::nullopt)};
  // Families as set_row_from_run names them.
  for (SetRow& r : rows)
    r.family = set_row_from_run(r.problem, "/nonexistent", std::nullopt).family;
  EXPECT_EQ(rows[0].family, "map");
  EXPECT_EQ(rows[2].family, "reduce-axis");
  const nlohmann::json s = summarize_set(rows);
  const nlohmann::json& map = s.at("families").at("map");
  EXPECT_EQ(map.at("problems").get<int>(), 2);
  EXPECT_NEAR(map.at("median_u").get<double>(), 0.8, 1e-12);
  EXPECT_NEAR(map.at("share_u_at_least_0.8").get<double>(), 0.5, 1e-12);
  EXPECT_NEAR(map.at("geomean_speedup_over_eager").get<double>(), std::sqrt(1.8 * 0.98), 1e-12);
  const nlohmann::json& norm = s.at("families").at("reduce-axis");
  EXPECT_EQ(norm.at("problems").get<int>(), 2);
  EXPECT_EQ(norm.at("accepted").get<int>(), 1);
  EXPECT_NEAR(norm.at("median_u").get<double>(), 0.25, 1e-12);  // 0 and 0.5
  EXPECT_NE(summary_markdown(s).find("| map | 2 | 2 | 0.800 | 50% | "), std::string::npos)
      << summary_markdown(s);
}

}  // namespace
}  // namespace kiln::evolve
