// Knob effects from a search's evaluations (see knob_sensitivity.hpp).
#include "evolve/knob_sensitivity.hpp"

#include <algorithm>
#include <cmath>

namespace kiln::evolve {

void KnobSensitivity::add(const Genome& genome, double u) {
  if (!(u > 0.0) || !std::isfinite(u)) return;
  for (const std::string& name : genome.strategies) {
    for (const Knob& knob : find_strategy(name).knobs) {
      if (knob.values.size() < 2) continue;
      Sum& s = by_value_[name + "." + knob.name][genome.knob(name, knob.name)];
      s.log_u += std::log(u);
      ++s.count;
    }
  }
}

double KnobSensitivity::spread(const std::string& key) const {
  const auto it = by_value_.find(key);
  if (it == by_value_.end() || it->second.size() < 2) return 0.0;
  double low = INFINITY, high = -INFINITY;
  for (const auto& [value, s] : it->second) {
    const double mean = s.log_u / s.count;
    low = std::min(low, mean);
    high = std::max(high, mean);
  }
  return high - low;
}

std::map<std::string, double> KnobSensitivity::weights() const {
  double largest = 0.0;
  for (const auto& [key, values] : by_value_) largest = std::max(largest, spread(key));
  std::map<std::string, double> w;
  if (!(largest > 0.0)) return w;  // nothing told apart yet: uniform
  for (const auto& [key, values] : by_value_)
    w[key] = values.size() < 2 ? 1.0 : kFloor + (1.0 - kFloor) * spread(key) / largest;
  return w;
}

}  // namespace kiln::evolve
