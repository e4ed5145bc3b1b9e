// The search loop (see search.hpp).
#include "evolve/search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <memory>

#include "core/error.hpp"
#include "evolve/knob_sensitivity.hpp"

namespace kiln::evolve {
namespace {

// The archive's cell: the genome's work mapping and the kernel's binding resource.
std::string cell_of(const Individual& i) {
  std::string mapping = "-";
  for (const std::string& s : i.genome.strategies)
    if (find_strategy(s).group == "work-mapping") mapping = s;
  return mapping + "|" + (i.evaluation.binding.empty() ? "-" : i.evaluation.binding);
}

// Better: higher fitness; ties broken by the genome's hash so that the order is total.
bool better(const Individual& a, const Individual& b) {
  const double fa = a.evaluation.fitness(), fb = b.evaluation.fitness();
  if (fa != fb) return fa > fb;
  return a.genome.hash() < b.genome.hash();
}

const Individual& tournament(const std::vector<Individual>& population, int size, Rng& rng) {
  const Individual* best = &population[rng.below(static_cast<int>(population.size()))];
  for (int i = 1; i < size; ++i) {
    const Individual& other = population[rng.below(static_cast<int>(population.size()))];
    if (better(other, *best)) best = &other;
  }
  return *best;
}

}  // namespace

std::size_t find_strategy_name(const std::string& text, const std::string& name) {
  const auto part_of_name = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
  };
  for (std::size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    const bool starts = at == 0 || !part_of_name(text[at - 1]);
    const std::size_t end = at + name.size();
    if (starts && (end == text.size() || !part_of_name(text[end]))) return at;
  }
  return std::string::npos;
}

Genome revise(const Genome& genome, const std::string& failure, Rng& rng,
              const StrategySet* allowed) {
  std::vector<std::string> optional;
  const std::vector<std::string> required = required_groups(genome.family);
  for (const std::string& s : genome.strategies)
    if (std::find(required.begin(), required.end(), find_strategy(s).group) == required.end())
      optional.push_back(s);
  // The failure's own words, without the genome's description (a generator's refusal may start
  // with it, naming every strategy).
  std::string text = failure;
  const std::string described = genome.describe();
  for (std::size_t at = text.find(described); at != std::string::npos; at = text.find(described))
    text.erase(at, described.size());
  std::string named;
  std::size_t first = std::string::npos;
  for (const std::string& s : optional) {
    if (const std::size_t at = find_strategy_name(text, s); at < first) {
      first = at;
      named = s;
    }
  }
  if (!named.empty() || !optional.empty()) {
    Genome g = genome;
    g.strategies.erase(!named.empty() ? named
                                      : optional[rng.below(static_cast<int>(optional.size()))]);
    return repair(g, rng, allowed);
  }
  return mutate_knob(genome, rng, allowed);
}

std::vector<Individual> carried_over(const std::vector<Individual>& ranked,
                                     const std::map<std::string, Individual>& archive, int elites,
                                     int archive_elites, int population) {
  std::vector<Individual> next;
  const int room = population - 1;  // at least one child per generation
  for (int e = 0; e < elites && e < static_cast<int>(ranked.size()) && e < room; ++e)
    next.push_back(ranked[static_cast<std::size_t>(e)]);
  std::vector<const Individual*> cells;
  for (const auto& [cell, best] : archive) cells.push_back(&best);
  std::sort(cells.begin(), cells.end(),
            [](const Individual* a, const Individual* b) { return better(*a, *b); });
  int kept = 0;
  for (const Individual* c : cells) {
    if (kept >= archive_elites || static_cast<int>(next.size()) >= room) break;
    const bool held = std::any_of(next.begin(), next.end(),
                                  [&](const Individual& n) { return cell_of(n) == cell_of(*c); });
    if (held) continue;
    next.push_back(*c);
    ++kept;
  }
  return next;
}

nlohmann::json Evaluation::to_json() const {
  nlohmann::json j = {{"correct", correct}, {"us", us},           {"roof_us", roof_us},
                      {"binding", binding}, {"failure", failure}, {"fitness", fitness()}};
  if (counters.measured() || !counters.error.empty()) j["counters"] = counters.to_json();
  return j;
}

Evaluation Evaluation::from_json(const nlohmann::json& j, const std::string& where) {
  try {
    Evaluation e;
    e.correct = j.at("correct").get<bool>();
    e.us = j.at("us").get<double>();
    e.roof_us = j.at("roof_us").get<double>();
    e.binding = j.at("binding").get<std::string>();
    e.failure = j.value("failure", std::string());
    if (j.contains("counters")) e.counters = KernelCounters::from_json(j.at("counters"), where);
    return e;
  } catch (const nlohmann::json::exception& ex) {
    throw UsageError(fmt::format("{}: not an evaluation ({})", where, ex.what()));
  }
}

std::map<Resource, double> guidance_weights(const Evaluation& e) {
  if (!e.correct || e.us <= 0) return {};  // nothing measured: uniform
  const double u = e.fitness();
  std::map<Resource, double> w = {{Resource::kHbm, 1.0},
                                  {Resource::kCompute, 1.0},
                                  {Resource::kLaunch, 1.0},
                                  {Resource::kL2, 1.0},
                                  {Resource::kOccupancy, 1.0}};
  const double gap = std::max(0.0, 1.0 - u);  // how far from the roof
  switch (counter_regime(e.counters)) {
    case CounterRegime::kDramSaturated:
      // Bytes already move at the device's pace: a kernel below its roof here reads or writes
      // more than the roof counts (a second pass, halos), and only reuse on chip removes that.
      w[Resource::kL2] += 6.0 * gap;
      w[Resource::kHbm] += 2.0 * gap;  // keep-on-chip and one-pass statistics are HBM-tagged
      break;
    case CounterRegime::kIssueBound:
      w[Resource::kCompute] += 4.0 * gap;
      w[Resource::kHbm] += 3.0 * gap;     // wider loads: fewer instructions a byte
      w[Resource::kLaunch] += 2.0 * gap;  // unrolling
      break;
    case CounterRegime::kLatencyBound:
      w[Resource::kOccupancy] += 5.0 * gap;
      w[Resource::kHbm] += 5.0 * gap;  // prefetch, cp.async, TMA: more bytes in flight
      break;
    case CounterRegime::kBetween:
    case CounterRegime::kUnmeasured:
      break;
  }
  if (counter_regime(e.counters) != CounterRegime::kUnmeasured &&
      counter_regime(e.counters) != CounterRegime::kBetween) {
    if (e.us < 20.0) w[Resource::kLaunch] += 4.0;
    return w;
  }
  if (e.binding == "memory") {
    w[Resource::kHbm] += 6.0 * gap;
    // Far from the memory roof a kernel often reads its data more than once (two-pass norms and
    // softmax): keeping it in L2 or a cluster's shared memory is what lifted softmax,
    // log-softmax and GroupNorm on H100 (cache-streaming, cluster-split-row;
    // docs/results/2026-11-25-tma-norms/), so L2 strategies gain too, less than HBM ones.
    w[Resource::kL2] += 3.0 * gap;
    w[Resource::kOccupancy] += 2.0 * gap;
  } else if (e.binding == "compute") {
    w[Resource::kCompute] += 6.0 * gap;
    w[Resource::kOccupancy] += 2.0 * gap;
  }
  // Very short kernels are bound by launches and tails whatever the roofline says.
  if (e.us < 20.0) w[Resource::kLaunch] += 4.0;
  return w;
}

SearchResult search(Family family, const SearchOptions& o, const Evaluator& evaluate,
                    const std::vector<Genome>& seeds,
                    const std::function<void(const Individual&)>& progress) {
  KILN_REQUIRE(o.budget >= 1 && o.population >= 2 && o.elites >= 0 && o.elites < o.population &&
                   o.archive_elites >= 0 && o.tournament >= 1 && o.max_revisions >= 0,
               "search: need budget >= 1, population >= 2, 0 <= elites < population, "
               "archive elites >= 0, tournament >= 1, revisions >= 0");
  Rng rng(o.seed);
  const StrategySet* allowed = o.allowed.empty() ? nullptr : &o.allowed;
  SearchResult result;
  std::map<std::uint64_t, Evaluation> cache;
  KnobSensitivity sensitivity;  // every real evaluation's knobs against its U
  int generation = 0;
  // Evaluates through the cache; records every real evaluation.
  const auto judge = [&](Individual individual) {
    const std::uint64_t h = individual.genome.hash();
    if (const auto it = cache.find(h); it != cache.end()) {
      ++result.cache_hits;
      individual.evaluation = it->second;
      return individual;
    }
    individual.evaluation = evaluate(individual.genome);
    individual.generation = generation;
    cache.emplace(h, individual.evaluation);
    sensitivity.add(individual.genome, individual.evaluation.fitness());
    result.history.push_back(individual);
    if (result.history.size() == 1 || better(individual, result.best)) result.best = individual;
    const std::string cell = cell_of(individual);
    if (individual.evaluation.correct &&
        (!result.archive.count(cell) || better(individual, result.archive[cell])))
      result.archive[cell] = individual;
    if (progress) progress(individual);
    return individual;
  };
  const auto spent = [&] { return static_cast<int>(result.history.size()) >= o.budget; };
  // A child, revised at most max_revisions times while it fails (never in random search).
  const auto judge_with_revisions = [&](Individual child) {
    Individual judged = judge(child);
    for (int r = 0; r < o.max_revisions && !o.random_only && !judged.evaluation.correct && !spent();
         ++r) {
      Individual revised{revise(judged.genome, judged.evaluation.failure, rng, allowed),
                         {},
                         generation,
                         "revision"};
      judged = judge(revised);
    }
    return judged;
  };

  // Genomes of a batch the cache does not hold, handed to `prepare` before any is judged.
  const auto prepare = [&](const std::vector<Individual>& batch) {
    if (!o.prepare) return;
    std::vector<Genome> fresh;
    for (const Individual& i : batch)
      if (!cache.count(i.genome.hash())) fresh.push_back(i.genome);
    if (!fresh.empty()) o.prepare(fresh);
  };

  std::vector<Individual> first;
  for (const Genome& g : seeds) {
    KILN_REQUIRE(
        g.family == family && violations(g).empty(),
        fmt::format("search: seed {} is not a valid {} genome", g.describe(), family_name(family)));
    first.push_back({g, {}, 0, "seed"});
  }
  if (o.mapping_defaults && !o.grow_from_seeds) {
    for (const Strategy* mapping : group_members("work-mapping", family)) {
      if (static_cast<int>(first.size()) >= o.population) break;
      if (!o.allowed.empty() && !o.allowed.count(mapping->name)) continue;
      const Genome g = default_genome(family, mapping->name, rng, &o.allowed);
      if (std::none_of(seeds.begin(), seeds.end(), [&](const Genome& s) { return s == g; }))
        first.push_back({g, {}, 0, "default"});
      // Structure the problem has (triangular operands) is worth trying from the start: the
      // mapping's default with each allowed "structure" strategy it can carry.
      for (const Strategy* structure : group_members("structure", family)) {
        if (static_cast<int>(first.size()) >= o.population) break;
        if (!o.allowed.count(structure->name)) continue;
        const auto& never = structure->incompatible;
        if (std::find(never.begin(), never.end(), mapping->name) != never.end()) continue;
        Genome with = g;
        with.strategies.insert(structure->name);
        with = repair(with, rng, &o.allowed);
        if (!with.has(structure->name) || with == g) continue;
        // The default form, then each other form of the structure (e.g. the triangle's grouped
        // GEMM and its ranged one: different kernels, which knob mutation alone reaches late).
        std::vector<Genome> forms = {with};
        for (const Knob& k : structure->knobs)
          if (k.form)
            for (std::size_t v = 1; v < k.values.size(); ++v) {
              Genome other = with;
              other.knobs[structure->name + "." + k.name] = k.values[v];
              forms.push_back(other);
            }
        for (const Genome& form : forms) {
          if (static_cast<int>(first.size()) >= o.population) break;
          if (std::none_of(first.begin(), first.end(),
                           [&](const Individual& i) { return i.genome == form; }))
            first.push_back({form, {}, 0, "default"});
        }
      }
    }
  }
  // A first genome that is not a seed: random, or (grow_from_seeds) one step from a seed, so
  // that a run from a single seed explores outward from it.
  const auto newcomer = [&]() -> Individual {
    if (o.grow_from_seeds && !seeds.empty()) {
      const Genome& from =
          seeds[static_cast<std::size_t>(rng.below(static_cast<int>(seeds.size())))];
      return {rng.unit() < 0.5 ? mutate_strategy(from, rng, {}, allowed)
                               : mutate_knob(from, rng, allowed),
              {},
              0,
              "seed-mutation"};
    }
    return {random_genome(family, rng, 0.3, allowed), {}, 0, "random"};
  };
  for (int i = static_cast<int>(first.size()); i < o.population; ++i) first.push_back(newcomer());
  prepare(first);
  std::vector<Individual> population;
  for (const Individual& i : first) {
    if (spent()) break;
    population.push_back(judge(i));
  }
  // A first population smaller than asked (all cache hits on a tiny landscape) is topped up.
  for (int tries = 0;
       static_cast<int>(population.size()) < o.population && !spent() && tries < 50 * o.population;
       ++tries) {
    population.push_back(judge(newcomer()));
  }
  int stalls = 0;
  while (!spent() && !population.empty() && stalls < 50 * o.population) {
    ++generation;
    const std::size_t before = result.history.size();
    std::vector<Individual> next;
    std::vector<Individual> ranked = population;
    std::sort(ranked.begin(), ranked.end(), better);
    if (!o.random_only)
      next = carried_over(ranked, result.archive, o.elites, o.archive_elites, o.population);
    // The generation's children first (they depend on the population only), then judged.
    std::vector<Individual> children;
    const std::map<std::string, double> knob_weights =
        o.uniform_knobs ? std::map<std::string, double>{} : sensitivity.weights();
    while (static_cast<int>(next.size() + children.size()) < o.population) {
      Individual child;
      child.generation = generation;
      if (o.random_only) {
        child.genome = random_genome(family, rng, 0.3, allowed);
        child.origin = "random";
      } else if (rng.unit() < o.crossover_rate) {
        const Individual& a = tournament(population, o.tournament, rng);
        const Individual& b = tournament(population, o.tournament, rng);
        const bool use_union = rng.unit() < o.union_share;
        child.genome =
            crossover(a.genome, b.genome, use_union ? Crossover::kUnion : Crossover::kIntersection,
                      rng, allowed);
        child.origin = use_union ? "crossover(union)" : "crossover(intersection)";
        if (rng.unit() < 0.5) child.genome = mutate_knob(child.genome, rng, allowed, &knob_weights);
      } else {
        const Individual& parent = tournament(population, o.tournament, rng);
        child.genome =
            rng.unit() < 0.5
                ? mutate_knob(parent.genome, rng, allowed, &knob_weights)
                : mutate_strategy(parent.genome, rng, guidance_weights(parent.evaluation), allowed);
        child.origin = "mutation";
      }
      children.push_back(child);
    }
    prepare(children);
    for (const Individual& child : children) {
      if (spent()) break;
      next.push_back(judge_with_revisions(child));
    }
    population = std::move(next);
    stalls = result.history.size() == before ? stalls + 1 : 0;
  }
  return result;
}

namespace {

std::shared_ptr<std::map<std::uint64_t, Evaluation>> recorded_evaluations(
    const nlohmann::json& log) {
  auto recorded = std::make_shared<std::map<std::uint64_t, Evaluation>>();
  if (!log.is_array()) throw UsageError("evaluation log: not a JSON array");
  for (std::size_t i = 0; i < log.size(); ++i) {
    const std::string where = fmt::format("evaluation log entry {}", i);
    try {
      const Genome g = Genome::from_json(log.at(i).at("genome"), where);
      (*recorded)[g.hash()] = Evaluation::from_json(log.at(i).at("evaluation"), where);
    } catch (const nlohmann::json::exception& e) {
      throw UsageError(fmt::format("{}: {}", where, e.what()));
    }
  }
  return recorded;
}

}  // namespace

Evaluator replay_evaluator(const nlohmann::json& log) {
  auto recorded = recorded_evaluations(log);
  return [recorded](const Genome& g) {
    const auto it = recorded->find(g.hash());
    if (it == recorded->end())
      throw Error(fmt::format("replay: {} is not in the evaluation log", g.describe()));
    return it->second;
  };
}

Evaluator resuming_evaluator(const nlohmann::json& log, Evaluator fresh) {
  auto recorded = recorded_evaluations(log);
  return [recorded, fresh = std::move(fresh)](const Genome& g) {
    const auto it = recorded->find(g.hash());
    return it != recorded->end() ? it->second : fresh(g);
  };
}

nlohmann::json history_to_log(const std::vector<Individual>& history) {
  nlohmann::json log = nlohmann::json::array();
  for (const Individual& i : history)
    log.push_back({{"genome", i.genome.to_json()},
                   {"evaluation", i.evaluation.to_json()},
                   {"generation", i.generation},
                   {"origin", i.origin}});
  return log;
}

}  // namespace kiln::evolve
