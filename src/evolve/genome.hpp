// A genome (issue 20): a kernel family, a set of strategies and their knob values, and
// optionally a source text (a proposal that is not template-made). Its hash keys the evaluation
// cache. Here: validity against the catalog's constraints, repair, random genomes, strategy-level
// crossover and mutation, with a counter-based random generator so that a run is reproducible
// from its seed on any platform (std::uniform_int_distribution is not).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "evolve/strategy.hpp"

namespace kiln::evolve {

// splitmix64 over a counter: reproducible streams of numbers.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  int below(int n);  // uniform in [0, n), n >= 1
  double unit();     // uniform in [0, 1)
  std::uint64_t state() const { return state_; }

 private:
  std::uint64_t state_;
};

struct Genome {
  Family family = Family::kMap;
  std::set<std::string> strategies;
  std::map<std::string, int> knobs;  // "strategy.knob" -> value
  std::string source;                // optional proposal text (not template-made)

  bool has(const std::string& strategy) const { return strategies.count(strategy) > 0; }
  // The value of a strategy's knob: the genome's, else the knob's default.
  int knob(const std::string& strategy, const std::string& knob_name) const;
  // Stable across runs and platforms: keys the evaluation cache (with the device).
  std::uint64_t hash() const;
  std::string describe() const;  // "map: vector16-loads(unroll=2) + grid-stride(...)"
  nlohmann::json to_json() const;
  static Genome from_json(const nlohmann::json& j, const std::string& where);
  bool operator==(const Genome&) const = default;
};

// The strategies a search may use (those its generator implements); null or empty: all.
using StrategySet = std::set<std::string>;

// Every broken constraint, in words; empty when the genome is valid: strategies exist and apply
// to the family, one per group, each required group present, no incompatible pair, knob values
// allowed, no knob of an absent strategy.
std::vector<std::string> violations(const Genome& genome);

// The nearest valid genome: strategies that do not apply dropped, group and incompatibility
// clashes resolved by dropping one side at random, missing required groups filled at random,
// knobs not allowed stepped to the nearest allowed value, orphan knobs removed; strategies
// outside `allowed` dropped and never added. Idempotent.
Genome repair(Genome genome, Rng& rng, const StrategySet* allowed = nullptr);

// Throws kiln::UsageError unless `genome` is a valid genome of `family` whose strategies all lie in
// `implemented`: the check every generator (named `generator`, e.g. "map") makes before
// translating, so that a strategy it has no code for is refused, not silently ignored.
void require_translatable(const Genome& genome, Family family, const StrategySet& implemented,
                          const std::string& generator);

// A valid genome: one random member per required group, each optional group with
// probability `optional_share`, knobs uniform.
// `strategy` with its knobs at their defaults (the catalog's first values), the other groups a
// family requires filled in at random (their knobs at defaults too) and repaired.
Genome default_genome(Family family, const std::string& strategy, Rng& rng,
                      const StrategySet* allowed = nullptr);
Genome random_genome(Family family, Rng& rng, double optional_share = 0.3,
                     const StrategySet* allowed = nullptr);

enum class Crossover { kUnion, kIntersection };
// Strategy-level crossover of two parents of one family (never splicing code): the union or the
// intersection of their strategy sets, each knob taken from a parent that has its strategy,
// then repaired.
Genome crossover(const Genome& a, const Genome& b, Crossover kind, Rng& rng,
                 const StrategySet* allowed = nullptr);

// A knob's next value: with probability 0.7 a neighbour of `current` in numeric order (at the
// smallest or largest value the one neighbour there: no wrap-around), else any other allowed
// value, uniformly. `values` in any order (the catalog lists the default first); fewer than two
// distinct values: `current`.
int next_knob_value(const std::vector<int>& values, int current, Rng& rng);
// One knob of one present strategy stepped by next_knob_value. The knob is drawn uniformly, or
// in proportion to `knob_weights` ("strategy.knob" -> weight; a knob it lacks weighs 1) when
// given: KnobSensitivity's, so that the knobs that move U on this problem are stepped more often.
Genome mutate_knob(const Genome& genome, Rng& rng, const StrategySet* allowed = nullptr,
                   const std::map<std::string, double>* knob_weights = nullptr);
// One strategy swapped for another of its group, added (an optional group) or removed (an
// optional one). `weights` (by Resource) bias the choice towards strategies addressing the
// binding resource; empty: uniform.
Genome mutate_strategy(const Genome& genome, Rng& rng, const std::map<Resource, double>& weights,
                       const StrategySet* allowed = nullptr);

}  // namespace kiln::evolve
