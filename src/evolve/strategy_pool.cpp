// The strategy pool (see strategy_pool.hpp).
#include "evolve/strategy_pool.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/provenance.hpp"

namespace kiln::evolve {

std::string size_class_of(double roof_us) {
  return roof_us < 100.0 ? "small" : "large";
}

void StrategyPool::add(const PoolEntry& entry) {
  for (PoolEntry& e : entries_) {
    if (e.key == entry.key && e.problem == entry.problem &&
        e.genome.hash() == entry.genome.hash()) {
      if (entry.fitness > e.fitness) e = entry;
      return;
    }
  }
  entries_.push_back(entry);
}

void StrategyPool::merge(const StrategyPool& other) {
  for (const PoolEntry& e : other.entries_) add(e);
}

namespace {

// The category without its kind: "single-gpu/middle-reduction" -> "single-gpu".
std::string coarse_category(const std::string& category) {
  return category.substr(0, category.find('/'));
}

}  // namespace

std::vector<Genome> StrategyPool::retrieve(const PoolKey& key, Family family, int count,
                                           const std::string& problem) const {
  // Match levels among other problems' entries: all five fields, then without arch, dtype, size
  // class, binding in turn; last the category's coarse part alone (another kind of the family).
  const auto matches = [&](const PoolEntry& e, int level) {
    const PoolKey& k = e.key;
    if (level >= 5) return coarse_category(k.category) == coarse_category(key.category);
    return k.category == key.category && (level >= 4 || k.binding == key.binding) &&
           (level >= 3 || k.size_class == key.size_class) && (level >= 2 || k.dtype == key.dtype) &&
           (level >= 1 || k.arch == key.arch);
  };
  std::vector<Genome> out;
  // Adds the best of `keep`'s entries of the family until `out` holds `limit`.
  const auto take = [&](const auto& keep, int limit) {
    std::vector<const PoolEntry*> found;
    for (const PoolEntry& e : entries_)
      if (e.genome.family == family && keep(e)) found.push_back(&e);
    std::sort(found.begin(), found.end(), [](const PoolEntry* a, const PoolEntry* b) {
      return a->fitness != b->fitness ? a->fitness > b->fitness
                                      : a->genome.hash() < b->genome.hash();
    });
    for (const PoolEntry* e : found) {
      if (static_cast<int>(out.size()) >= limit) break;
      if (std::none_of(out.begin(), out.end(), [&](const Genome& g) { return g == e->genome; }))
        out.push_back(e->genome);
    }
  };
  const auto own = [&](const PoolEntry& e) { return !problem.empty() && e.problem == problem; };
  // The problem's own best first, but at most half: a run that found a local optimum would
  // otherwise seed itself with it alone and never meet what its neighbours found.
  take(own, (count + 1) / 2);
  for (int level = 0; level <= 5; ++level)
    take([&](const PoolEntry& e) { return !own(e) && matches(e, level); }, count);
  take(own, count);  // too few neighbours: the rest of its own
  return out;
}

void StrategyPool::refine_categories(
    const std::function<std::string(const std::string& problem)>& kind_of) {
  std::vector<PoolEntry> entries;
  entries.swap(entries_);
  for (PoolEntry& e : entries) {
    if (e.key.category.find('/') == std::string::npos) {
      const std::string kind = kind_of(e.problem);
      if (!kind.empty()) e.key.category += "/" + kind;
    }
    add(e);  // two entries that now share a key keep the better fitness
  }
}

std::vector<Genome> pool_seeds(const StrategyPool& pool, const PoolKey& key, Family family,
                               int count, const std::string& problem, const StrategySet& allowed,
                               std::uint64_t seed) {
  Rng rng(seed);
  std::vector<Genome> seeds;
  for (const Genome& found : pool.retrieve(key, family, count, problem)) {
    const Genome g = allowed.empty() ? found : repair(found, rng, &allowed);
    if (violations(g).empty() && std::find(seeds.begin(), seeds.end(), g) == seeds.end())
      seeds.push_back(g);
  }
  return seeds;
}

nlohmann::json StrategyPool::to_json() const {
  nlohmann::json entries = nlohmann::json::array();
  for (const PoolEntry& e : entries_) {
    entries.push_back({{"category", e.key.category},
                       {"binding", e.key.binding},
                       {"size_class", e.key.size_class},
                       {"dtype", e.key.dtype},
                       {"arch", e.key.arch},
                       {"genome", e.genome.to_json()},
                       {"fitness", e.fitness},
                       {"speedup", e.speedup},
                       {"problem", e.problem}});
  }
  return {{"kiln_strategy_pool", 1}, {"entries", entries}};
}

StrategyPool StrategyPool::from_json(const nlohmann::json& j, const std::string& where) {
  StrategyPool pool;
  try {
    if (j.at("kiln_strategy_pool").get<int>() != 1)
      throw UsageError(fmt::format("{}: unknown strategy pool version", where));
    for (const auto& e : j.at("entries")) {
      PoolEntry entry;
      entry.key = {e.at("category").get<std::string>(), e.at("binding").get<std::string>(),
                   e.at("size_class").get<std::string>(), e.at("dtype").get<std::string>(),
                   e.at("arch").get<std::string>()};
      entry.genome = Genome::from_json(e.at("genome"), where);
      entry.fitness = e.at("fitness").get<double>();
      entry.speedup = e.at("speedup").get<double>();
      entry.problem = e.value("problem", std::string());
      pool.entries_.push_back(std::move(entry));
    }
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("{}: not a strategy pool ({})", where, e.what()));
  }
  return pool;
}

StrategyPool StrategyPool::load(const std::string& path) {
  std::ifstream file(path);
  if (!file) return {};
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(file);
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("--pool {}: not JSON ({})", path, e.what()));
  }
  return from_json(j, "--pool " + path);
}

void StrategyPool::save(const std::string& path) const {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  const std::string tmp = path + ".tmp";
  core::write_json_file(tmp, to_json());
  std::filesystem::rename(tmp, path);
}

}  // namespace kiln::evolve
