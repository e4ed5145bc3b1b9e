// The strategy pool (issue 20): what worked, kept across runs for retrieval. Entries are keyed by
// (problem category, binding resource, size class, dtype, architecture) and hold genomes with
// their measured fitness (U) and speedup. Retrieval takes what was measured on the same problem
// first (a category holds problems whose best kernels differ: a softmax winner is a poor batch-norm
// seed), then backs off field by field (architecture first, then dtype, size class, binding), so
// a new problem starts from what worked on its nearest neighbours. A JSON file (the CLI's --pool).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "evolve/genome.hpp"

namespace kiln::evolve {

struct PoolKey {
  std::string category;    // e.g. "single-gpu"
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
  // Up to `count` genomes of `family` for `key`, best first: first those measured on `problem`
  // itself (any key), then backing off as described above. `problem` empty: no preference.
  std::vector<Genome> retrieve(const PoolKey& key, Family family, int count,
                               const std::string& problem = "") const;
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
