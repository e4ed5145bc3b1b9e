// `kiln tune validate` and `kiln tune compare` (issue 4), per rank and collective over the
// communicator. Validate: per shape, the tuner's base plan's GEMM is profiled afresh, and the
// partitions it allows are predicted (from the fresh and from the saved GEMM profile) and measured
// interleaved (all of them when there are at most max_measured, else the predicted
// best half of that budget plus the equal-size and one-wave-per-group plans plus a random sample),
// then the predictive choice and the fastest few measured partitions are re-timed interleaved.
// Compare: the full operation (reorder included) with the tuned plan, the equal-size and
// one-wave-per-group strategies and given reference plans, interleaved; strategies that pick the
// same plan share one measurement, and the tuned plan is timed a second time as its own variant (an
// A/A control).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/stats.hpp"
#include "tune/tune_measure.hpp"
#include "tune/tuner_profile.hpp"

namespace kiln::tune {

// The runtime's values that the tuner reads and writes.
using overlap::GemmShape;
using overlap::OverlapOp;
using overlap::Plan;

struct TuneValidateOptions {
  overlap::OverlapOp op = overlap::OverlapOp::kReduceScatter;
  core::DType dtype = core::DType::kBf16;
  overlap::WeightLayout layout = overlap::WeightLayout::kNK;
  std::vector<overlap::GemmShape> shapes;
  tune::PartitionLimits limits;
  int max_measured = 100;  // partitions measured per shape
  int warmup = 2;
  int iterations = 10;   // per partition and round
  int sweep_rounds = 3;  // rounds over which every partition of a shape is measured interleaved
  // The re-timing of the predictive choice against the fastest measured (and compare's timing):
  // 60 runs over 6 rounds. With 20 over 4 (runs 3-6) the median's spread (~0.5%) made the
  // minimum over five finalists read ~1% below the predictive choice even where they tie.
  int final_rounds = 6;
  int final_iterations = 60;  // over all rounds
  int final_candidates = 4;   // fastest measured partitions re-timed beside the predictive one
  bool aa_control = true;     // compare: also time the tuned plan as a second variant
  std::uint64_t seed = 1;
};

// The shapes validate uses by default: 4 to 12 waves at 128-132 CTAs, so that the allowed
// partitions of most can all be measured.
std::vector<overlap::GemmShape> default_validation_shapes();

// The plan whose partitions validate measures for `shape`: the tuner's predictive choice among
// the overlap plans alone. The serial plan is left out (it has one partition and a base the profile
// never measured; compare times it where the tuner picks it).
Plan validation_plan(const tune::TunerProfile& profile, const GemmShape& shape,
                     const tune::PartitionLimits& limits);

struct ValidationPoint {
  overlap::GemmShape shape;
  std::string plan;
  int waves = 0;
  double predicted_us = 0.0;  // overhead + GEMM/communication timeline (no reorder), fresh GEMM
  double predicted_saved_us = 0.0;  // the same from the saved profile's GEMM measurement
  double measured_us = 0.0;         // run without reorder, median of the max over ranks
  double measured_cv = 0.0;
  bool predictive_choice = false;
  double relative_error() const { return (predicted_us - measured_us) / measured_us; }
  double saved_relative_error() const { return (predicted_saved_us - measured_us) / measured_us; }
};

struct ShapeValidation {
  overlap::GemmShape shape;
  std::string base_plan;
  int waves = 0;
  std::uint64_t allowed = 0;  // allowed partitions (closed form)
  int measured = 0;
  bool exhaustive = false;  // every allowed partition was measured
  double plan_us = 0.0;     // host time the predictive choice took
  std::string predictive_plan, best_plan;
  double predictive_us = 0.0, best_us = 0.0;  // interleaved re-timing, without reorder
  int finalists = 0;  // partitions in that re-timing, the predictive choice included
  // The GEMM profile of this shape and base plan measured in the same rounds (the predictions'
  // source; none in records before 2026-11-28).
  std::optional<GemmProfile> fresh_gemm;
  double speed_ratio() const { return best_us / predictive_us; }  // 1: the optimum
};

using TuneValidateProgress = std::function<void(double units, const std::string& step)>;

std::vector<ShapeValidation> run_tune_validation(comm::Communicator& comm,
                                                 const tune::TunerProfile& profile,
                                                 const TuneValidateOptions& options,
                                                 std::vector<ValidationPoint>& points,
                                                 const TuneValidateProgress& progress);

struct CompareRow {
  overlap::GemmShape shape;
  std::vector<std::string> names;  // "tuned", "equal", "per-wave", "reference"...
  std::vector<std::string> plans;
  std::vector<double> predicted_us;  // full operation; < 0 where the profile cannot predict it
  std::vector<core::TimingStats> measured;  // full operation, interleaved
  int timed_variants = 0;  // distinct variants timed (names with the same plan share one)
};

// `reference` holds, per shape of `shapes` (same order), a plan string or "" for none.
std::vector<CompareRow> run_tune_compare(comm::Communicator& comm,
                                         const tune::TunerProfile& profile,
                                         const TuneValidateOptions& options,
                                         const std::vector<std::string>& reference,
                                         const TuneValidateProgress& progress);

}  // namespace kiln::tune
