// Confirmation of a search's best kernels (see confirmation.hpp).
#include "evolve/confirmation.hpp"

#include <algorithm>
#include <set>

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
