// evolve::replay_run: a run folder written as `kiln evolve run` writes it (run.json, seeds.json,
// log.json), from a search on a synthetic evaluator, replays on its recorded path; a run.json
// that says another seed leaves the path and says where; a folder without a run is refused.
#include "evolve/run_replay.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include <unistd.h>

#include "core/error.hpp"
#include "evolve/candidate_evaluator.hpp"
#include "evolve/search.hpp"

namespace kiln::evolve {
namespace {

Evaluation by_hash(const Genome& g) {
  Evaluation e;
  e.correct = true;
  e.roof_us = 100.0;
  e.us = 100.0 / (0.3 + 0.6 * static_cast<double>(g.hash() % 1000) / 1000.0);
  e.binding = "memory";
  return e;
}

void write(const std::filesystem::path& path, const nlohmann::json& j) {
  std::ofstream(path) << j.dump();
}

TEST(EvolveReplay, ARecordedRunReplaysOnItsPathAndAnotherSeedLeavesIt) {
  const std::string problem = "kb1-19-relu";
  const std::optional<Family> family = generated_family(problem);
  ASSERT_TRUE(family.has_value());
  SearchOptions so;  // as `kiln evolve run` sets them
  so.seed = 5;
  so.population = 8;
  so.elites = 2;
  so.allowed = generated_strategies(problem);
  so.budget = 30;
  const SearchResult r = search(*family, so, by_hash);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("kiln-replay-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  nlohmann::json run = {{"problem", problem}, {"size", "small"},         {"seed", 5},
                        {"random", false},    {"population", 8},         {"seed_naive", false},
                        {"timing", "screen"}, {"device", "NVIDIA H100"}, {"uniform_knobs", false}};
  write(dir / "run.json", run);
  write(dir / "seeds.json", nlohmann::json::array());
  write(dir / "log.json", history_to_log(r.history));
  const RunReplay same = replay_run(dir.string());
  EXPECT_TRUE(same.same_path) << same.divergence;
  EXPECT_EQ(same.recorded, r.history.size());
  EXPECT_EQ(same.replayed, r.history.size());
  run["seed"] = 6;
  write(dir / "run.json", run);
  const RunReplay other = replay_run(dir.string());
  EXPECT_FALSE(other.same_path);
  EXPECT_FALSE(other.divergence.empty());
  EXPECT_LT(other.replayed, other.recorded);
  // A run recorded before knob sensitivity (run.json without "uniform_knobs") picked knobs
  // uniformly, and replays so; the same log read as a knob-sensitive run leaves its path.
  so.uniform_knobs = true;
  const SearchResult uniform = search(*family, so, by_hash);
  run["seed"] = 5;
  run.erase("uniform_knobs");
  write(dir / "run.json", run);
  write(dir / "log.json", history_to_log(uniform.history));
  const RunReplay old = replay_run(dir.string());
  EXPECT_TRUE(old.same_path) << old.divergence;
  EXPECT_EQ(old.replayed, uniform.history.size());
  run["uniform_knobs"] = false;
  write(dir / "run.json", run);
  EXPECT_FALSE(replay_run(dir.string()).same_path);
  std::filesystem::remove(dir / "log.json");
  EXPECT_THROW(replay_run(dir.string()), UsageError);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kiln::evolve
