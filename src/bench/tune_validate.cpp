// Validation and comparison of the tuner on the GPU (see tune_validate.hpp).
#include "bench/tune_validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <set>

#include "core/error.hpp"

namespace kiln::bench {
namespace {

using overlap::GemmShape;
using overlap::Plan;

std::string shape_text(const GemmShape& s) {
  return fmt::format("{}x{}x{}", s.m, s.n, s.k);
}

// A random allowed partition: cut after each wave with probability p (p varies per draw, so both
// few large and many small groups are sampled); retried until it passes the limits.
std::vector<int> random_partition(int waves, const overlap::PartitionLimits& limits,
                                  std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int attempt = 0; attempt < 10000; ++attempt) {
    const double p = 0.1 + 0.8 * unit(rng);
    std::vector<int> groups{1};
    for (int w = 1; w < waves; ++w) {
      if (unit(rng) < p) {
        groups.push_back(1);
      } else {
        ++groups.back();
      }
    }
    if (groups.front() <= limits.first && groups.back() <= limits.last) return groups;
  }
  return std::vector<int>(waves, 1);
}

// The partitions validate measures for one shape (see tune_validate.hpp), predictive choice first.
std::vector<std::vector<int>> partitions_to_measure(const overlap::WaveProfile& wave,
                                                    const overlap::LatencyCurve& curve,
                                                    const TuneValidateOptions& o,
                                                    const std::vector<int>& predictive,
                                                    bool* exhaustive) {
  const int waves = wave.waves();
  const std::uint64_t allowed = overlap::candidate_count(waves, o.limits);
  std::set<std::vector<int>> seen;
  std::vector<std::vector<int>> out;
  const auto add = [&](const std::vector<int>& p) {
    if (static_cast<int>(out.size()) < o.max_measured && seen.insert(p).second) out.push_back(p);
  };
  add(predictive);
  *exhaustive = allowed <= static_cast<std::uint64_t>(o.max_measured);
  if (*exhaustive) {
    for (const auto& p : overlap::candidate_partitions(waves, o.limits)) add(p);
    return out;
  }
  // The predicted best half of the budget (when they can be enumerated), the two fixed strategies,
  // then a random sample.
  if (waves <= 20) {
    std::vector<std::pair<double, std::vector<int>>> ranked;
    for (auto& p : overlap::candidate_partitions(waves, o.limits)) {
      const double t = overlap::predict(wave, curve, p).seconds;
      ranked.emplace_back(t, std::move(p));
    }
    std::sort(ranked.begin(), ranked.end());
    for (std::size_t i = 0; i < ranked.size() && static_cast<int>(out.size()) < o.max_measured / 2;
         ++i) {
      add(ranked[i].second);
    }
  }
  std::vector<int> per_wave(waves, 1);
  if (per_wave.back() <= o.limits.last) add(per_wave);
  std::mt19937_64 rng(o.seed + static_cast<std::uint64_t>(waves));
  for (int i = 0; i < 50 * o.max_measured && static_cast<int>(out.size()) < o.max_measured; ++i) {
    add(random_partition(waves, o.limits, rng));
  }
  return out;
}

}  // namespace

std::vector<GemmShape> default_validation_shapes() {
  return {{2048, 8192, 4096}, {2048, 8192, 8192},  {4096, 4096, 4096},  {4096, 4096, 8192},
          {3072, 8192, 8192}, {4096, 6144, 8192},  {4096, 8192, 2048},  {4096, 8192, 4096},
          {4096, 8192, 8192}, {8192, 4096, 14336}, {2048, 16384, 4096}, {6144, 8192, 4096}};
}

std::vector<ShapeValidation> run_tune_validation(comm::Communicator& comm,
                                                 const overlap::TunerProfile& profile,
                                                 const TuneValidateOptions& o,
                                                 std::vector<ValidationPoint>& points,
                                                 const TuneValidateProgress& progress) {
  std::vector<ShapeValidation> shapes;
  for (const GemmShape& shape : o.shapes) {
    ShapeValidation sv;
    sv.shape = shape;
    const auto start = std::chrono::steady_clock::now();
    const overlap::TunedPlan tuned = overlap::tune_plan(profile, shape, o.limits);
    sv.plan_us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    const Plan base = tuned.chosen.plan;
    sv.base_plan = overlap::base_plan_string(base);
    overlap::GemmProfile gemm;
    const overlap::WaveProfile wave = overlap::wave_profile_for(profile, shape, base, &gemm);
    const overlap::TransportCurve* transport = profile.curve_for(base, gemm.launch);
    const overlap::LatencyCurve curve = transport->curve();
    sv.waves = wave.waves();
    sv.allowed = overlap::candidate_count(sv.waves, o.limits);
    const std::vector<std::vector<int>> partitions =
        partitions_to_measure(wave, curve, o, base.partition, &sv.exhaustive);
    sv.measured = static_cast<int>(partitions.size());

    OverlapTimer timer(comm, o.op, o.dtype, o.layout, shape);
    // A fresh GEMM profile of this shape and base plan, measured now: the chip's clock moves with
    // its temperature and power over minutes (docs/results/2026-11-23-overlap/), so the saved
    // profile's GEMM time may belong to another clock. Errors are reported against both.
    overlap::TunerProfile fresh = profile;
    {
      TuneProfileOptions po;
      po.warmup = o.warmup;
      const overlap::GemmProfile g = measure_gemm_profile(timer, profile, base, po);
      std::erase_if(fresh.gemms, [&](const overlap::GemmProfile& e) {
        return e.base_plan == g.base_plan && e.shape.m == shape.m && e.shape.n == shape.n &&
               e.shape.k == shape.k;
      });
      fresh.gemms.push_back(g);
    }
    // Every partition measured interleaved over rounds, so that clock drift hits all alike.
    std::vector<Plan> plans;
    for (const std::vector<int>& partition : partitions) {
      Plan plan = base;
      plan.partition = partition;
      plans.push_back(plan);
    }
    const std::vector<core::TimingStats> measured =
        timer.time_interleaved(plans, OverlapTimer::Part::kWithoutReorder, o.warmup,
                               o.iterations * o.sweep_rounds, o.sweep_rounds);
    double best = 1e300;
    Plan best_plan = base;
    for (std::size_t i = 0; i < plans.size(); ++i) {
      const Plan& plan = plans[i];
      const overlap::PlanCandidate predicted = overlap::predict_plan(fresh, shape, plan);
      const overlap::PlanCandidate saved = overlap::predict_plan(profile, shape, plan);
      ValidationPoint point;
      point.shape = shape;
      point.plan = overlap::to_string(plan);
      point.waves = sv.waves;
      point.predicted_us = predicted.predicted_us - predicted.reorder_us;
      point.predicted_saved_us = saved.predicted_us - saved.reorder_us;
      point.measured_us = measured[i].median;
      point.measured_cv = measured[i].cv;
      point.predictive_choice = plan.partition == base.partition;
      points.push_back(point);
      if (measured[i].median < best) {
        best = measured[i].median;
        best_plan = plan;
      }
    }
    if (progress) progress(static_cast<double>(plans.size()), shape_text(shape));
    // Re-time the predictive choice against the best measured one, interleaved: the sweep's
    // minimum is biased low by its own noise.
    sv.predictive_plan = overlap::to_string(base);
    sv.best_plan = overlap::to_string(best_plan);
    if (best_plan.partition == base.partition) {
      const auto t = timer.time_interleaved({base}, OverlapTimer::Part::kWithoutReorder, o.warmup,
                                            o.final_iterations, o.final_rounds);
      sv.predictive_us = sv.best_us = t[0].median;
    } else {
      const auto t = timer.time_interleaved({base, best_plan}, OverlapTimer::Part::kWithoutReorder,
                                            o.warmup, o.final_iterations, o.final_rounds);
      sv.predictive_us = t[0].median;
      sv.best_us = std::min(t[1].median, t[0].median);
    }
    shapes.push_back(sv);
  }
  return shapes;
}

std::vector<CompareRow> run_tune_compare(comm::Communicator& comm,
                                         const overlap::TunerProfile& profile,
                                         const TuneValidateOptions& o,
                                         const std::vector<std::string>& reference,
                                         const TuneValidateProgress& progress) {
  std::vector<CompareRow> rows;
  for (std::size_t i = 0; i < o.shapes.size(); ++i) {
    const GemmShape& shape = o.shapes[i];
    CompareRow row;
    row.shape = shape;
    std::vector<Plan> plans;
    const auto add = [&](const std::string& name, const Plan& plan) {
      row.names.push_back(name);
      row.plans.push_back(overlap::to_string(plan));
      double predicted = -1.0;
      try {
        predicted = overlap::predict_plan(profile, shape, plan).predicted_us;
      } catch (const UsageError&) {
        // A reference plan whose base plan the profile never measured.
      }
      row.predicted_us.push_back(predicted);
      plans.push_back(plan);
    };
    add("tuned", overlap::tune_plan(profile, shape, o.limits).chosen.plan);
    add("equal",
        overlap::tune_plan(profile, shape, o.limits, overlap::PartitionStrategy::kEqualSize)
            .chosen.plan);
    add("per-wave",
        overlap::tune_plan(profile, shape, o.limits, overlap::PartitionStrategy::kOneWavePerGroup)
            .chosen.plan);
    if (i < reference.size() && !reference[i].empty()) {
      add("reference", overlap::parse_plan(reference[i], "reference plan of " + shape_text(shape)));
    }
    OverlapTimer timer(comm, o.op, o.dtype, o.layout, shape);
    row.measured = timer.time_interleaved(plans, OverlapTimer::Part::kFull, o.warmup,
                                          o.final_iterations, o.final_rounds);
    rows.push_back(row);
    if (progress) progress(1.0, shape_text(shape));
  }
  return rows;
}

}  // namespace kiln::bench
