// The search loop of kiln's evolution engine (issue 20), independent of how a genome is turned
// into a kernel and judged: an `Evaluator` does that (the judge on a GPU, or a recorded log in
// replay). Per generation: parents by tournament with elitism, strategy-level crossover (union or
// intersection, repaired), knob and strategy mutation weighted by the parent's binding resource
// (roofline guidance), at most two revisions of a child that fails (drop an optional strategy or
// step a knob), evaluation through a cache keyed by the genome's hash. An archive keeps the best
// genome per (work mapping x binding resource) so that diverse solutions survive (MAP-Elites).
// `random_only` turns every operator off: the plain random search the issue compares against.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "evolve/genome.hpp"
#include "evolve/kernel_counters.hpp"

namespace kiln::evolve {

struct Evaluation {
  bool correct = false;
  double us = 0.0;       // median time
  double roof_us = 0.0;  // T_roof of the problem
  std::string binding;   // "memory", "compute", ... (the roofline's resource name)
  std::string failure;   // compile error or the judge's reason
  // With --ncu, for the kernels that were a run's best when judged: Nsight Compute's counters
  // (kept in the log, so that a replay or a resume guides the same way).
  KernelCounters counters;
  // U = T_roof / T for a correct kernel, 0 otherwise: the fitness.
  double fitness() const { return correct && us > 0 ? roof_us / us : 0.0; }
  nlohmann::json to_json() const;
  static Evaluation from_json(const nlohmann::json& j, const std::string& where);
};

using Evaluator = std::function<Evaluation(const Genome&)>;

struct Individual {
  Genome genome;
  Evaluation evaluation;
  int generation = 0;
  std::string origin;  // "seed", "random", "crossover(union)", "mutation", "revision", ...
};

struct SearchOptions {
  int budget = 100;  // evaluations (cache hits are free)
  int population = 16;
  int elites = 2;
  // Besides the elites, the best of up to this many other archive cells (work mapping x binding)
  // go on to the next generation, so that a mapping that lost the population's top places can
  // still be crossed and mutated (the archive kept them only for the report and the pool).
  int archive_elites = 2;
  int tournament = 3;
  double crossover_rate = 0.6;
  double union_share = 0.5;  // of crossovers, the share that take the union
  int max_revisions = 2;
  std::uint64_t seed = 1;
  bool random_only = false;
  // Knob mutations pick knobs uniformly instead of by their measured effect on this problem
  // (KnobSensitivity, knob_sensitivity.hpp): the search as it was before 2026-11-30b, kept for
  // the A/B and for replaying runs recorded before (their run.json lacks "uniform_knobs").
  bool uniform_knobs = false;
  StrategySet allowed;  // the strategies the generator implements; empty: the whole catalog
  // The first population beyond the seeds: one mutation away from a seed instead of random
  // genomes (a search that must start from given kernels only, e.g. the reduction ladder test).
  bool grow_from_seeds = false;
  // Otherwise the first population also holds, for each work mapping of the allowed set, that
  // mapping at its knobs' defaults (the catalog's best-known values), the other groups filled in
  // at random (unless a seed is that very genome): each mapping the generator implements enters the
  // search at a configuration known to be good, not only at random knob values (H100, 2026-11-25:
  // with random knobs alone, a 16-evaluation matmul search never drew the sm90 GEMM's 128 x 256
  // cluster tile that reaches U 0.70, and kept CUTLASS 2.x at 0.42).
  bool mapping_defaults = true;
  // Called with each batch of genomes about to be judged (the first population, then each
  // generation's children) before any is: an evaluator may compile them ahead, in parallel.
  std::function<void(const std::vector<Genome>&)> prepare;
};

struct SearchResult {
  std::vector<Individual> history;  // every evaluation in order (revisions included)
  Individual best;
  std::map<std::string, Individual> archive;  // "work-mapping|binding" -> best
  int cache_hits = 0;
};

// Runs until `budget` evaluations; `seeds` (valid genomes of `family`) join the first population,
// random genomes fill it. `progress` (may be empty) sees each evaluated individual.
SearchResult search(Family family, const SearchOptions& options, const Evaluator& evaluate,
                    const std::vector<Genome>& seeds = {},
                    const std::function<void(const Individual&)>& progress = {});

// The mutation weights a parent's measurement asks for: far from a memory roof favours HBM
// strategies, far from a compute roof compute ones, a kernel near the launch floor favours
// launch and fusion strategies. With counters (--ncu) the gap is split by what they show: at the
// DRAM ceiling, strategies that move fewer bytes (L2, on-chip reuse); issue-bound, compute and
// load-path ones (fewer instructions a byte); latency-bound, occupancy and load-path ones (more
// in flight).
std::map<Resource, double> guidance_weights(const Evaluation& evaluation);

// What a generation carries over unchanged: the `elites` best of `ranked` (best first), then the
// best individuals of up to `archive_elites` archive cells (work mapping x binding) that those do
// not already represent, best first; never more than population - 1 (one child at least).
std::vector<Individual> carried_over(const std::vector<Individual>& ranked,
                                     const std::map<std::string, Individual>& archive, int elites,
                                     int archive_elites, int population);

// Where `name` first stands in `text` as a whole strategy name (not inside a longer name such as
// "vector16-loads" in "vector16-loads-x"); npos if nowhere.
std::size_t find_strategy_name(const std::string& text, const std::string& name);
// A failing genome's next try (at most SearchOptions::max_revisions per child): the optional
// strategy its `failure` names first (a generator's refusal such as "warp-mma-tiles: not for
// triangular products", or a judge's reason) dropped; where it names none, a random optional
// one; where there is none, one knob stepped. Repaired against the constraints.
Genome revise(const Genome& genome, const std::string& failure, Rng& rng,
              const StrategySet* allowed = nullptr);

// Replays recorded evaluations: looks a genome up by hash in `log` (a JSON array of
// {"genome", "evaluation"}); a genome not in the log is an error naming it (a replay must take
// the same path as the recorded run).
Evaluator replay_evaluator(const nlohmann::json& log);
// Resuming a run: the genomes `log` holds get their recorded evaluation, the others `fresh`'s.
// The search is deterministic given its seed and its evaluations, so a resumed run retraces the
// interrupted one through the log and then goes on (the log is the checkpoint).
Evaluator resuming_evaluator(const nlohmann::json& log, Evaluator fresh);
nlohmann::json history_to_log(const std::vector<Individual>& history);

}  // namespace kiln::evolve
