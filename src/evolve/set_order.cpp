// Spreading compile-heavy problems through a set run (see set_order.hpp).
#include "evolve/set_order.hpp"

#include <cstddef>

namespace kiln::evolve {

std::vector<std::string> spread_compile_heavy(
    const std::vector<std::string>& names, const std::function<bool(const std::string&)>& heavy) {
  std::vector<std::string> heavy_ones, light_ones;
  for (const std::string& n : names) (heavy(n) ? heavy_ones : light_ones).push_back(n);
  const std::size_t total = names.size(), h = heavy_ones.size();
  std::vector<std::string> order;
  std::size_t next_heavy = 0, next_light = 0;
  for (std::size_t slot = 0; slot < total; ++slot) {
    // Bresenham's rule: by slot k (0-based), floor((k + 1) h / total) heavy problems are placed,
    // so they land at the end of equal stretches; when the light ones run out, the rest follow.
    const bool take_heavy =
        next_heavy < h && ((slot + 1) * h / total > next_heavy || next_light == light_ones.size());
    order.push_back(take_heavy ? heavy_ones[next_heavy++] : light_ones[next_light++]);
  }
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
