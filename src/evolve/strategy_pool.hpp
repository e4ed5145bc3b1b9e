// The strategy pool (issue 20): what worked, kept across runs for retrieval. Entries are keyed by
// (problem category, binding resource, size class, dtype, architecture) and hold genomes with
// their measured fitness (U) and speedup. The category is "<bench category>/<kind>", the kind
// naming the problem's shape within its family (evolve::problem_kind: "middle-reduction",
// "norm-rows", "pool-1d-stride1", ...). Retrieval takes what was measured on the same problem first
// (up to half, rounded up), then other problems' entries backing off field by field (architecture
// first, then dtype, size class, binding, last the kind), so a run starts from what worked on it
// and on its nearest neighbours. A JSON file (the CLI's --pool).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "evolve/genome.hpp"

namespace kiln::evolve {

struct PoolKey {
  std::string category;    // e.g. "single-gpu/middle-reduction"
  std::string binding;     // "memory", "compute"
  std::string size_class;  // "small" / "large" (by T_roof: below or above 100 us)
  std::string dtype;       // "fp32"
  std::string arch;        // "sm_90"
  bool operator==(const PoolKey&) const = default;
};
std::string size_class_of(double roof_us);

struct PoolEntry {
  PoolKey key;
  Genome genome;
  double fitness = 0.0;  // U
  double speedup = 0.0;  // over the problem's baseline (PyTorch eager or the reference)
  std::string problem;
};

class StrategyPool {
 public:
  // Keeps the entry; an entry of the same key, problem and genome hash keeps the better fitness.
  void add(const PoolEntry& entry);
  // Every entry of `other` added as by add(): pools of separate runs become one.
  void merge(const StrategyPool& other);
  // Up to `count` genomes of `family` for `key`: the best measured on `problem` itself (any key)
  // up to half of `count` (rounded up: one asked for is its own best), then other problems' best
  // backing off as described above, then more of the problem's own if still short. `problem` empty:
  // no preference.
  std::vector<Genome> retrieve(const PoolKey& key, Family family, int count,
                               const std::string& problem = "") const;
  // Entries written before categories had kinds ("single-gpu") get "/" + kind_of(problem) (left
  // alone where kind_of answers ""), so an older pool's measurements are retrieved by kind too.
  void refine_categories(const std::function<std::string(const std::string& problem)>& kind_of);
  std::size_t size() const { return entries_.size(); }

  nlohmann::json to_json() const;
  static StrategyPool from_json(const nlohmann::json& j, const std::string& where);
  // A missing file is an empty pool; a broken one is a kiln::UsageError naming it.
  static StrategyPool load(const std::string& path);
  void save(const std::string& path) const;  // atomically (temporary file, then rename)

 private:
  std::vector<PoolEntry> entries_;
};

// A run's seeds from the pool: retrieve(key, family, count, problem), each genome repaired to
// `allowed` (the strategies the problem's generator implements: a neighbour's winner may use one
// this generator lacks) with an Rng of `seed`, duplicates after repair dropped.
std::vector<Genome> pool_seeds(const StrategyPool& pool, const PoolKey& key, Family family,
                               int count, const std::string& problem, const StrategySet& allowed,
                               std::uint64_t seed);

}  // namespace kiln::evolve
