// What `kiln tune validate` reports from its measurements, host logic only (CPU-tested): the error
// statistics, the per-shape table, the CSV of every (shape, partition) pair and the JSON fields.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tune/tune_validate.hpp"

namespace kiln::tune {

struct ValidationSummary {
  std::vector<double> errors;         // |relative error| of every measured partition
  std::vector<double> chosen_errors;  // ... of the predictive choices
  std::vector<double> saved_errors;   // ... predicted from the saved profile's GEMM times
  double mean_error = 0.0, p90_error = 0.0, max_error = 0.0, chosen_median = 0.0;
  double mean_saved_error = 0.0;
  int shapes_within_1pct = 0;  // predictive plan >= 99% of the best measured speed
};

ValidationSummary summarize_validation(const std::vector<ValidationPoint>& points,
                                       const std::vector<ShapeValidation>& shapes);

// The per-shape table (header and rows) and the summary line, as printed.
std::string validation_table(const std::vector<ShapeValidation>& shapes);
std::string validation_summary_line(const ValidationSummary& summary, std::size_t points,
                                    std::size_t shapes);
// One CSV row per (shape, partition) pair, with a header.
std::string validation_csv(const std::vector<ValidationPoint>& points);
// The result file's fields (the envelope adds provenance and the benchmark's name).
nlohmann::json validation_json(const ValidationSummary& summary,
                               const std::vector<ShapeValidation>& shapes);

}  // namespace kiln::tune
