#include "core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"

namespace kiln::core {

TimingStats summarize(std::span<const double> samples) {
  if (samples.empty()) throw Error("summarize: no samples");
  std::vector<double> sorted(samples.begin(), samples.end());
  for (double value : sorted) {
    if (!std::isfinite(value)) throw Error("summarize: a sample is not finite");
  }
  std::sort(sorted.begin(), sorted.end());
  TimingStats stats;
  stats.count = static_cast<int>(sorted.size());
  const std::size_t n = sorted.size();
  stats.median = n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  stats.min = sorted.front();
  stats.max = sorted.back();
  stats.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(n);
  if (n >= 2) {
    double squares = 0.0;
    for (double value : sorted) squares += (value - stats.mean) * (value - stats.mean);
    stats.stddev = std::sqrt(squares / static_cast<double>(n - 1));
    stats.cv = stats.mean != 0.0 ? stats.stddev / stats.mean : 0.0;
  }
  return stats;
}

TimingStats summarize(std::span<const float> samples) {
  std::vector<double> widened(samples.begin(), samples.end());
  return summarize(std::span<const double>(widened));
}

nlohmann::json to_json(const TimingStats& s) {
  return {{"median", s.median}, {"min", s.min}, {"max", s.max},
          {"mean", s.mean},     {"cv", s.cv},   {"count", s.count}};
}

}  // namespace kiln::core
