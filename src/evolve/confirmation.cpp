// Confirmation of a search's best kernels (see confirmation.hpp).
#include "evolve/confirmation.hpp"

#include <algorithm>
#include <set>
#include <string>

#include "evolve/strategy.hpp"

namespace kiln::evolve {

std::vector<Individual> best_accepted(const std::vector<Individual>& history, int count) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < history.size(); ++i)
    if (history[i].evaluation.fitness() > 0) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return history[a].evaluation.fitness() > history[b].evaluation.fitness();
  });
  std::vector<Individual> best;
  std::set<std::uint64_t> seen;
  for (const std::size_t i : order) {
    if (static_cast<int>(best.size()) >= count) break;
    if (seen.insert(history[i].genome.hash()).second) best.push_back(history[i]);
  }
  return best;
}

namespace {

// The genome's work-mapping strategy ("" when it has none).
std::string work_mapping_of(const Genome& genome) {
  for (const std::string& s : genome.strategies)
    if (find_strategy(s).group == "work-mapping") return s;
  return "";
}

}  // namespace

std::vector<Individual> confirmation_order(const std::vector<Individual>& history, int count) {
  // Every distinct accepted genome, best first; then each mapping's best to the front.
  const std::vector<Individual> ranked = best_accepted(history, static_cast<int>(history.size()));
  std::vector<Individual> order;
  std::vector<bool> taken(ranked.size(), false);
  std::set<std::string> mappings;
  // A mapping far behind (under half the best's fitness) is not worth a confirmation slot that
  // a near-tie of the best could take.
  const double floor = ranked.empty() ? 0.0 : 0.5 * ranked.front().evaluation.fitness();
  for (std::size_t i = 0; i < ranked.size(); ++i)
    if (ranked[i].evaluation.fitness() >= floor &&
        mappings.insert(work_mapping_of(ranked[i].genome)).second) {
      order.push_back(ranked[i]);
      taken[i] = true;
    }
  for (std::size_t i = 0; i < ranked.size(); ++i)
    if (!taken[i]) order.push_back(ranked[i]);
  if (static_cast<int>(order.size()) > count) order.resize(static_cast<std::size_t>(count));
  return order;
}

std::vector<Confirmed> confirm(const std::vector<Individual>& candidates,
                               const Evaluator& evaluate) {
  std::vector<Confirmed> confirmed;
  for (const Individual& c : candidates) confirmed.push_back({c, evaluate(c.genome)});
  return confirmed;
}

int best_confirmed(const std::vector<Confirmed>& confirmed) {
  int best = -1;
  for (int i = 0; i < static_cast<int>(confirmed.size()); ++i) {
    if (confirmed[i].confirmed.fitness() <= 0) continue;
    if (best < 0 || confirmed[i].confirmed.fitness() > confirmed[best].confirmed.fitness())
      best = i;
  }
  return best;
}

}  // namespace kiln::evolve
