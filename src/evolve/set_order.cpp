// The order of a set run's problems (see set_order.hpp).
#include "evolve/set_order.hpp"

#include <algorithm>
#include <cstddef>
#include <utility>

namespace kiln::evolve {

std::vector<std::string> longest_first(const std::vector<std::string>& names,
                                       const std::function<int(const std::string&)>& weight) {
  std::vector<std::pair<int, std::string>> weighted;
  weighted.reserve(names.size());
  for (const std::string& n : names) weighted.emplace_back(weight(n), n);
  std::stable_sort(weighted.begin(), weighted.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> order;
  order.reserve(names.size());
  for (auto& [w, n] : weighted) order.push_back(std::move(n));
  return order;
}

std::optional<std::size_t> next_problem(const std::vector<bool>& started,
                                        const std::vector<bool>& heavy, int heavy_running,
                                        int max_heavy) {
  std::optional<std::size_t> first_heavy;
  for (std::size_t i = 0; i < started.size(); ++i) {
    if (started[i]) continue;
    if (!heavy[i]) {
      // A light one, unless a heavy one comes first and may start now.
      if (first_heavy && heavy_running < max_heavy) return first_heavy;
      return i;
    }
    if (!first_heavy) first_heavy = i;
  }
  return first_heavy;  // only heavy ones left (or none): they start whatever runs
}

}  // namespace kiln::evolve
