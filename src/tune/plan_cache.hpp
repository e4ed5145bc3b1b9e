// The tuner's plan cache (issue 4): chosen plans keyed by device, world size, operation, dtype and
// GEMM shape, saved as JSON. A shape that was never tuned takes the plan of its nearest tuned
// neighbour with the same device, world, operation and dtype, where the distance between shapes
// is |ln(M/M')| + |ln(N/N')| + |ln(K/K')|: shapes scale multiplicatively, so doubling any one
// dimension costs the same (ln 2), and a neighbour must match the other keys exactly because a
// plan does not carry over between GPUs, world sizes or collectives. Host logic only.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "overlap/gemm_shape.hpp"

namespace kiln::tune {

// The runtime's values that the tuner reads and writes.
using overlap::GemmShape;

struct PlanKey {
  std::string device;  // hardware profile key, e.g. "h200-sxm"
  int world = 1;
  std::string op;     // "rs", "ar"
  std::string dtype;  // "bf16", "fp16"
  GemmShape shape;
};

struct CachedPlan {
  PlanKey key;
  std::string plan;           // overlap::to_string(Plan)
  double predicted_us = 0.0;  // the predictor's latency for it
  double measured_us = -1.0;  // when it was measured; < 0: not measured
};

// Distance between two shapes (see above); both must be positive in every dimension.
double shape_distance(const GemmShape& a, const GemmShape& b);

class PlanCache {
 public:
  // Adds or replaces the entry with the same key.
  void put(const CachedPlan& entry);
  const CachedPlan* exact(const PlanKey& key) const;
  // The entry nearest to key.shape among those matching the other keys, if its distance is at
  // most max_distance (then *distance is set when not null); nullptr otherwise.
  const CachedPlan* nearest(const PlanKey& key, double max_distance,
                            double* distance = nullptr) const;
  const std::vector<CachedPlan>& entries() const { return entries_; }

  nlohmann::json to_json() const;
  // Throws kiln::UsageError naming `source` and the entry that is not a plan-cache entry.
  static PlanCache from_json(const nlohmann::json& json, const std::string& source);

 private:
  std::vector<CachedPlan> entries_;
};

}  // namespace kiln::tune
