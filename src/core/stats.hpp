// Timing statistics over repeated measurements: median, min, max, mean and coefficient of
// variation, the figures every kiln table reports.
#pragma once

#include <nlohmann/json.hpp>
#include <span>
#include <vector>

namespace kiln::core {

struct TimingStats {
  int count = 0;
  double median = 0.0;
  double min = 0.0;
  double max = 0.0;
  double mean = 0.0;
  double stddev = 0.0;  // sample standard deviation (n - 1)
  double cv = 0.0;      // stddev / mean; 0 when mean is 0 or count < 2
};

// Throws kiln::Error on an empty sample or on a non-finite value.
TimingStats summarize(std::span<const double> samples);
TimingStats summarize(std::span<const float> samples);

// {"median", "min", "max", "mean", "cv", "count"}: how every benchmark's result file writes them.
nlohmann::json to_json(const TimingStats& stats);

}  // namespace kiln::core
