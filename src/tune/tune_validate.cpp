// Validation and comparison of the tuner on the GPU (see tune_validate.hpp).
#include "tune/tune_validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <set>

#include "core/error.hpp"
#include "overlap/launch_geometry.hpp"

namespace kiln::tune {
namespace {

using overlap::GemmShape;
using overlap::Plan;

std::string shape_text(const GemmShape& s) {
  return fmt::format("{}x{}x{}", s.m, s.n, s.k);
}

// A random allowed partition: cut after each wave with probability p (p varies per draw, so both
// few large and many small groups are sampled); retried until it passes the limits.
std::vector<int> random_partition(int waves, const tune::PartitionLimits& limits,
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
std::vector<std::vector<int>> partitions_to_measure(const tune::WaveProfile& wave,
                                                    const tune::LatencyCurve& curve,
                                                    const TuneValidateOptions& o,
                                                    const std::vector<int>& predictive,
                                                    bool* exhaustive) {
  const int waves = wave.waves();
  const std::uint64_t allowed = candidate_count(waves, o.limits);
  std::set<std::vector<int>> seen;
  std::vector<std::vector<int>> out;
  const auto add = [&](const std::vector<int>& p) {
    if (static_cast<int>(out.size()) < o.max_measured && seen.insert(p).second) out.push_back(p);
  };
  add(predictive);
  *exhaustive = allowed <= static_cast<std::uint64_t>(o.max_measured);
  if (*exhaustive) {
    for (const auto& p : tune::candidate_partitions(waves, o.limits)) add(p);
    return out;
  }
  // The predicted best half of the budget (when they can be enumerated), the two fixed strategies,
  // then a random sample.
  if (waves <= 20) {
    std::vector<std::pair<double, std::vector<int>>> ranked;
    for (auto& p : tune::candidate_partitions(waves, o.limits)) {
      const double t = tune::predict(wave, curve, p).seconds;
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

Plan validation_plan(const tune::TunerProfile& profile, const GemmShape& shape,
                     const tune::PartitionLimits& limits) {
  return tune::tune_plan(profile, shape, limits, tune::PartitionStrategy::kPredictive, false)
      .chosen.plan;
}

std::vector<ShapeValidation> run_tune_validation(comm::Communicator& comm,
                                                 const tune::TunerProfile& profile,
                                                 const TuneValidateOptions& o,
                                                 std::vector<ValidationPoint>& points,
                                                 const TuneValidateProgress& progress) {
  std::vector<ShapeValidation> shapes;
  for (const GemmShape& shape : o.shapes) {
    ShapeValidation sv;
    sv.shape = shape;
    const auto start = std::chrono::steady_clock::now();
    const Plan base = validation_plan(profile, shape, o.limits);
    sv.plan_us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    sv.base_plan = tune::base_plan_string(base);
    tune::GemmProfile gemm;
    const tune::WaveProfile wave = tune::wave_profile_for(profile, shape, base, &gemm);
    const tune::TransportCurve* transport = profile.curve_for(base, gemm.launch);
    const tune::LatencyCurve curve = transport->curve();
    sv.waves = wave.waves();
    sv.allowed = candidate_count(sv.waves, o.limits);
    const std::vector<std::vector<int>> partitions =
        partitions_to_measure(wave, curve, o, base.partition, &sv.exhaustive);
    sv.measured = static_cast<int>(partitions.size());

    OverlapTimer timer(comm, o.op, o.dtype, o.layout, shape);
    // Every partition measured interleaved over rounds, each round back to back on the GPU, and
    // in the same rounds a fresh GEMM profile of this shape and base plan (its parts on objects of
    // their own, one traced run per round): the chip's clock swings by 10-20% over seconds at its
    // power cap (run-5 dmon), so a profile taken at another moment would differ from the
    // measurements by the moment. Errors are also reported against the saved profile.
    std::vector<Plan> plans;
    std::vector<std::unique_ptr<overlap::GemmCollective>> ops;
    std::vector<OverlapTimer::Variant> variants;
    for (const std::vector<int>& partition : partitions) {
      Plan plan = base;
      plan.partition = partition;
      plans.push_back(plan);
      ops.push_back(timer.make(plan, false));
      variants.push_back({ops.back().get(), OverlapTimer::Part::kWithoutReorder});
    }
    GemmProfileRun fresh_run(timer, profile, base);
    for (const OverlapTimer::Variant& v : fresh_run.variants()) variants.push_back(v);
    timer.settle(*ops.front(), timer.settle_seconds());
    const std::vector<core::TimingStats> timed = timer.time_variants(
        variants, o.warmup, o.iterations, o.sweep_rounds, [&](int) { fresh_run.trace_once(); });
    const std::vector<core::TimingStats> measured(timed.begin(), timed.begin() + plans.size());
    tune::TunerProfile fresh = profile;
    {
      const tune::GemmProfile g =
          fresh_run.finish(std::span<const core::TimingStats>(timed).subspan(
              plans.size(), fresh_run.variants().size()));
      sv.fresh_gemm = g;
      std::erase_if(fresh.gemms, [&](const tune::GemmProfile& e) {
        return e.base_plan == g.base_plan && e.shape.m == shape.m && e.shape.n == shape.n &&
               e.shape.k == shape.k;
      });
      fresh.gemms.push_back(g);
    }
    for (std::size_t i = 0; i < plans.size(); ++i) {
      const Plan& plan = plans[i];
      const tune::PlanCandidate predicted = tune::predict_plan(fresh, shape, plan);
      const tune::PlanCandidate saved = tune::predict_plan(profile, shape, plan);
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
    }
    if (progress) progress(static_cast<double>(plans.size()), shape_text(shape));
    // The sweep's minimum is biased low by its own noise (the best of up to max_measured noisy
    // medians), so the optimum is decided by a second, longer interleaved timing of the
    // final_candidates fastest measured partitions and the predictive choice (index 0).
    std::vector<std::size_t> order(plans.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
      return measured[x].median < measured[y].median;
    });
    std::vector<Plan> finalists{plans[0]};
    for (std::size_t i = 0;
         i < order.size() && static_cast<int>(finalists.size()) <= o.final_candidates; ++i) {
      if (order[i] != 0) finalists.push_back(plans[order[i]]);
    }
    const std::vector<core::TimingStats> final_times =
        timer.time_interleaved(finalists, OverlapTimer::Part::kWithoutReorder, o.warmup,
                               o.final_iterations, o.final_rounds);
    sv.predictive_plan = overlap::to_string(base);
    sv.predictive_us = final_times[0].median;
    sv.best_us = final_times[0].median;
    sv.best_plan = sv.predictive_plan;
    for (std::size_t i = 1; i < finalists.size(); ++i) {
      if (final_times[i].median < sv.best_us) {
        sv.best_us = final_times[i].median;
        sv.best_plan = overlap::to_string(finalists[i]);
      }
    }
    sv.finalists = static_cast<int>(finalists.size());
    shapes.push_back(sv);
  }
  return shapes;
}

std::vector<CompareRow> run_tune_compare(comm::Communicator& comm,
                                         const tune::TunerProfile& profile,
                                         const TuneValidateOptions& o,
                                         const std::vector<std::string>& reference,
                                         const TuneValidateProgress& progress) {
  std::vector<CompareRow> rows;
  for (std::size_t i = 0; i < o.shapes.size(); ++i) {
    const GemmShape& shape = o.shapes[i];
    CompareRow row;
    row.shape = shape;
    // Strategies that pick the same plan share one measurement (the same plan is the same code);
    // the A/A control is the exception: the tuned plan again on its own object, timed as its own
    // variant, so its ratio to "tuned" shows the measurement's own bias between variants.
    std::vector<Plan> timed;
    std::vector<std::size_t> timed_index;
    const auto add = [&](const std::string& name, const Plan& plan, bool own_variant) {
      row.names.push_back(name);
      row.plans.push_back(overlap::to_string(plan));
      double predicted = -1.0;
      try {
        predicted = tune::predict_plan(profile, shape, plan).predicted_us;
      } catch (const UsageError&) {
        // A reference plan whose base plan the profile never measured.
      }
      row.predicted_us.push_back(predicted);
      std::size_t index = timed.size();
      // The first variant with this plan (the tuned one, never its A/A copy).
      for (std::size_t t = 0; t < timed.size() && !own_variant && index == timed.size(); ++t) {
        if (overlap::to_string(timed[t]) == row.plans.back()) index = t;
      }
      if (index == timed.size()) timed.push_back(plan);
      timed_index.push_back(index);
    };
    const Plan tuned = tune::tune_plan(profile, shape, o.limits).chosen.plan;
    add("tuned", tuned, false);
    if (o.aa_control) add("tuned-again", tuned, true);
    add("equal",
        tune::tune_plan(profile, shape, o.limits, tune::PartitionStrategy::kEqualSize).chosen.plan,
        false);
    add("per-wave",
        tune::tune_plan(profile, shape, o.limits, tune::PartitionStrategy::kOneWavePerGroup)
            .chosen.plan,
        false);
    if (i < reference.size() && !reference[i].empty()) {
      const Plan ref = overlap::parse_plan(reference[i], "reference plan of " + shape_text(shape));
      // A reference from another machine or world size may group another wave count.
      const int waves = overlap::host_launch_geometry(shape, ref.gemm, ref.schedule,
                                                      overlap::current_device_sms())
                            .waves();
      int grouped = 0;
      for (int g : ref.partition) grouped += g;
      if (ref.partition.empty() || grouped == waves) {
        add("reference", ref, false);
      } else if (comm.rank() == 0) {
        std::fprintf(stderr,
                     "compare %s: reference plan groups %d waves, this GPU launches %d; "
                     "skipped\n",
                     shape_text(shape).c_str(), grouped, waves);
      }
    }
    OverlapTimer timer(comm, o.op, o.dtype, o.layout, shape);
    const std::vector<core::TimingStats> measured = timer.time_interleaved(
        timed, OverlapTimer::Part::kFull, o.warmup, o.final_iterations, o.final_rounds);
    for (std::size_t index : timed_index) row.measured.push_back(measured[index]);
    row.timed_variants = static_cast<int>(timed.size());
    rows.push_back(row);
    if (progress) progress(1.0, shape_text(shape));
  }
  return rows;
}

}  // namespace kiln::tune
