// `kiln tune validate`'s measurements re-predicted offline (host logic, CPU-tested): the tuner's
// model can then be changed and judged against recorded GPU measurements without a GPU. A record
// is the validation's JSON (the saved profile, and per shape since 2026-11-28 the GEMM profile
// measured in the same rounds as the partitions) and its CSV (every measured (shape, partition)
// pair). Each pair is predicted as validate predicts it: from the profile with that shape's fresh
// GEMM profile where the record has one, else from the saved profile alone.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "overlap/gemm_shape.hpp"

namespace kiln::tune {

// One CSV row: what was measured and what validate predicted for it.
struct RecordedPoint {
  overlap::GemmShape shape;
  std::string plan;
  double measured_us = 0.0;
  double predicted_us = 0.0;        // from the fresh GEMM profile
  double predicted_saved_us = 0.0;  // from the saved profile's GEMM times
};

// The CSV that validate writes (validation_csv), by its header's column names; a UsageError
// naming `source` and the line for anything else.
std::vector<RecordedPoint> parse_validation_csv(const std::string& text, const std::string& source);

struct ReplayedShape {
  overlap::GemmShape shape;
  int points = 0;
  bool fresh = false;       // predicted from the record's fresh GEMM profile
  double mean_error = 0.0;  // signed (predicted - measured) / measured
  double mean_abs_error = 0.0;
};

struct ReplayResult {
  std::vector<double> predicted_us;  // per point, without the reorder (as validate records)
  std::vector<double> errors;        // per point, (predicted - measured) / measured
  std::vector<ReplayedShape> shapes;
  double mean_abs_error = 0.0, p90_abs_error = 0.0, max_abs_error = 0.0;
  // Largest |replayed - recorded| prediction (the recorded one of the same source: fresh or
  // saved): 0 while the model is the one that ran the validation.
  double max_change_us = 0.0;
};

ReplayResult replay_validation(const nlohmann::json& validation,
                               const std::vector<RecordedPoint>& points, const std::string& source);

}  // namespace kiln::tune
