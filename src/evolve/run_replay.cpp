// Replay of a recorded `kiln evolve run` (see run_replay.hpp).
#include "evolve/run_replay.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/error.hpp"
#include "evolve/candidate_evaluator.hpp"
#include "evolve/search.hpp"

namespace kiln::evolve {

namespace {

nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in)
    throw UsageError(fmt::format("evolve replay: {}: missing (not a run folder?)", path.string()));
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("evolve replay: {}: not JSON ({})", path.string(), e.what()));
  }
}

}  // namespace

RunReplay replay_run(const std::string& folder) {
  const std::filesystem::path dir(folder);
  const nlohmann::json run = read_json(dir / "run.json");
  const nlohmann::json seeds_json = read_json(dir / "seeds.json");
  const nlohmann::json log = read_json(dir / "log.json");
  if (!run.is_object() || !seeds_json.is_array() || !log.is_array() || log.empty())
    throw UsageError(
        fmt::format("evolve replay: {}: run.json, seeds.json or log.json is not a "
                    "run's (an object, an array, a non-empty array)",
                    folder));
  SearchOptions so;
  std::string problem;
  try {
    problem = run.at("problem").get<std::string>();
    so.seed = run.at("seed").get<std::uint64_t>();
    so.population = run.at("population").get<int>();
    so.random_only = run.at("random").get<bool>();
    so.grow_from_seeds = run.at("seed_naive").get<bool>();
    // Runs recorded before knob sensitivity (2026-11-30b) lack the field and picked uniformly.
    so.uniform_knobs = run.value("uniform_knobs", !so.random_only);
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("evolve replay: {}/run.json: {}", folder, e.what()));
  }
  const std::optional<Family> family = generated_family(problem);
  if (!family)
    throw UsageError(
        fmt::format("evolve replay: {}: no generator for problem {}", folder, problem));
  // As `kiln evolve run` sets them (apps/kiln/cmd_evolve.cpp).
  so.elites = std::min(2, so.population - 1);
  so.allowed = generated_strategies(problem);
  so.budget = static_cast<int>(log.size());
  std::vector<Genome> seeds;
  for (const auto& g : seeds_json) seeds.push_back(Genome::from_json(g, folder + "/seeds.json"));
  RunReplay out;
  out.recorded = log.size();
  std::vector<Genome> path;
  try {
    const SearchResult r = search(*family, so, replay_evaluator(log), seeds,
                                  [&](const Individual& i) { path.push_back(i.genome); });
    out.replayed = r.history.size();
  } catch (const Error& e) {  // replay_evaluator: a genome the log does not hold
    out.replayed = path.size();
    out.divergence = e.what();
    return out;
  }
  for (std::size_t i = 0; i < path.size() && i < log.size(); ++i) {
    const Genome recorded = Genome::from_json(log[i].at("genome"), folder + "/log.json");
    if (!(recorded == path[i])) {
      out.divergence = fmt::format("evaluation {}: replayed {}, recorded {}", i + 1,
                                   path[i].describe(), recorded.describe());
      return out;
    }
  }
  out.same_path = path.size() == log.size();
  if (!out.same_path)
    out.divergence = fmt::format("{} evaluations replayed of {} recorded", path.size(), log.size());
  return out;
}

}  // namespace kiln::evolve
