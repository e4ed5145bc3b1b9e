#include "tune/plan_cache.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace kiln::tune {
namespace {

bool same_shape(const GemmShape& a, const GemmShape& b) {
  return a.m == b.m && a.n == b.n && a.k == b.k;
}

bool same_setting(const PlanKey& a, const PlanKey& b) {
  return a.device == b.device && a.world == b.world && a.op == b.op && a.dtype == b.dtype;
}

void check_shape(const GemmShape& s) {
  if (s.m < 1 || s.n < 1 || s.k < 1) {
    throw UsageError(fmt::format("shape {}x{}x{}: every dimension must be >= 1", s.m, s.n, s.k));
  }
}

}  // namespace

double shape_distance(const GemmShape& a, const GemmShape& b) {
  check_shape(a);
  check_shape(b);
  return std::abs(std::log(static_cast<double>(a.m) / b.m)) +
         std::abs(std::log(static_cast<double>(a.n) / b.n)) +
         std::abs(std::log(static_cast<double>(a.k) / b.k));
}

void PlanCache::put(const CachedPlan& entry) {
  check_shape(entry.key.shape);
  for (CachedPlan& e : entries_) {
    if (same_setting(e.key, entry.key) && same_shape(e.key.shape, entry.key.shape)) {
      e = entry;
      return;
    }
  }
  entries_.push_back(entry);
}

const CachedPlan* PlanCache::exact(const PlanKey& key) const {
  for (const CachedPlan& e : entries_) {
    if (same_setting(e.key, key) && same_shape(e.key.shape, key.shape)) return &e;
  }
  return nullptr;
}

const CachedPlan* PlanCache::nearest(const PlanKey& key, double max_distance,
                                     double* distance) const {
  const CachedPlan* best = nullptr;
  double best_distance = std::numeric_limits<double>::infinity();
  for (const CachedPlan& e : entries_) {
    if (!same_setting(e.key, key)) continue;
    const double d = shape_distance(e.key.shape, key.shape);
    if (d < best_distance) {
      best_distance = d;
      best = &e;
    }
  }
  if (best == nullptr || best_distance > max_distance) return nullptr;
  if (distance != nullptr) *distance = best_distance;
  return best;
}

nlohmann::json PlanCache::to_json() const {
  nlohmann::json out = nlohmann::json::array();
  for (const CachedPlan& e : entries_) {
    out.push_back({{"device", e.key.device},
                   {"world", e.key.world},
                   {"op", e.key.op},
                   {"dtype", e.key.dtype},
                   {"shape", {e.key.shape.m, e.key.shape.n, e.key.shape.k}},
                   {"plan", e.plan},
                   {"predicted_us", e.predicted_us},
                   {"measured_us", e.measured_us}});
  }
  return {{"plan_cache_version", 1}, {"entries", out}};
}

PlanCache PlanCache::from_json(const nlohmann::json& json, const std::string& source) {
  if (!json.is_object() || json.value("plan_cache_version", 0) != 1 || !json.contains("entries") ||
      !json["entries"].is_array()) {
    throw UsageError(source + ": not a kiln plan cache (want plan_cache_version 1 and entries)");
  }
  PlanCache cache;
  int index = 0;
  for (const nlohmann::json& e : json["entries"]) {
    try {
      CachedPlan p;
      p.key.device = e.at("device").get<std::string>();
      p.key.world = e.at("world").get<int>();
      p.key.op = e.at("op").get<std::string>();
      p.key.dtype = e.at("dtype").get<std::string>();
      const auto& s = e.at("shape");
      if (!s.is_array() || s.size() != 3) throw UsageError("shape must be [M, N, K]");
      p.key.shape = {s[0].get<int>(), s[1].get<int>(), s[2].get<int>()};
      p.plan = e.at("plan").get<std::string>();
      p.predicted_us = e.value("predicted_us", 0.0);
      p.measured_us = e.value("measured_us", -1.0);
      if (p.key.world < 1) throw UsageError("world must be >= 1");
      cache.put(p);
    } catch (const std::exception& error) {
      throw UsageError(fmt::format("{}: entry {}: {}", source, index, error.what()));
    }
    ++index;
  }
  return cache;
}

}  // namespace kiln::tune
