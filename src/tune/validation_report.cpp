// Reporting of `kiln tune validate` (see validation_report.hpp).
#include "tune/validation_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "tune/error_cdf_plot.hpp"

namespace kiln::tune {
namespace {

double mean_of(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(std::max<std::size_t>(values.size(), 1));
}

}  // namespace

ValidationSummary summarize_validation(const std::vector<ValidationPoint>& points,
                                       const std::vector<ShapeValidation>& shapes) {
  ValidationSummary s;
  for (const auto& p : points) {
    s.errors.push_back(std::abs(p.relative_error()));
    s.saved_errors.push_back(std::abs(p.saved_relative_error()));
    if (p.predictive_choice) s.chosen_errors.push_back(std::abs(p.relative_error()));
  }
  s.mean_error = mean_of(s.errors);
  s.mean_saved_error = mean_of(s.saved_errors);
  s.p90_error = s.errors.empty() ? 0.0 : quantile(s.errors, 0.9);
  s.max_error = s.errors.empty() ? 0.0 : *std::max_element(s.errors.begin(), s.errors.end());
  s.chosen_median = s.chosen_errors.empty() ? 0.0 : quantile(s.chosen_errors, 0.5);
  for (const auto& shape : shapes) s.shapes_within_1pct += shape.speed_ratio() >= 0.99 ? 1 : 0;
  return s;
}

std::string validation_table(const std::vector<ShapeValidation>& shapes) {
  std::string out = fmt::format("{:>18} {:>5} {:>8} {:>8} {:>4} {:>8} {:>10} {:>10} {:>7}  {}\n",
                                "shape", "waves", "allowed", "measured", "all", "plan us",
                                "predictive", "best", "ratio", "predictive plan | best plan");
  for (const auto& s : shapes) {
    out += fmt::format("{:>18} {:5} {:8} {:8} {:>4} {:8.0f} {:10.1f} {:10.1f} {:7.3f}  {} | {}\n",
                       overlap::shape_name(s.shape), s.waves, s.allowed, s.measured,
                       s.exhaustive ? "yes" : "no", s.plan_us, s.predictive_us, s.best_us,
                       s.speed_ratio(), s.predictive_plan, s.best_plan);
  }
  return out;
}

std::string validation_summary_line(const ValidationSummary& s, std::size_t points,
                                    std::size_t shapes) {
  return fmt::format(
      "# {} (shape, partition) pairs: mean |error| {:.2f}%, p90 {:.2f}%, max {:.2f}%; predictive "
      "choices {:.2f}% median; predictive plan >= 99% of the best measured speed on {} of {} "
      "shapes; with the saved profile's GEMM times: mean |error| {:.2f}%\n",
      points, 100 * s.mean_error, 100 * s.p90_error, 100 * s.max_error, 100 * s.chosen_median,
      s.shapes_within_1pct, shapes, 100 * s.mean_saved_error);
}

std::string validation_csv(const std::vector<ValidationPoint>& points) {
  std::string out =
      "shape,waves,plan,predicted_us,measured_us,measured_cv,relative_error,predictive,"
      "predicted_saved_us,saved_relative_error\n";
  for (const auto& p : points) {
    out += fmt::format("{},{},{},{:.2f},{:.2f},{:.4f},{:.5f},{},{:.2f},{:.5f}\n",
                       overlap::shape_name(p.shape), p.waves, csv_field(p.plan), p.predicted_us,
                       p.measured_us, p.measured_cv, p.relative_error(),
                       p.predictive_choice ? 1 : 0, p.predicted_saved_us, p.saved_relative_error());
  }
  return out;
}

nlohmann::json validation_json(const ValidationSummary& summary,
                               const std::vector<ShapeValidation>& shapes) {
  nlohmann::json j;
  j["mean_abs_error"] = summary.mean_error;
  j["mean_abs_error_saved_profile"] = summary.mean_saved_error;
  j["p90_abs_error"] = summary.p90_error;
  j["shapes_within_1pct"] = summary.shapes_within_1pct;
  j["shapes"] = nlohmann::json::array();
  for (const auto& s : shapes) {
    j["shapes"].push_back({{"shape", overlap::shape_name(s.shape)},
                           {"waves", s.waves},
                           {"allowed", s.allowed},
                           {"measured", s.measured},
                           {"exhaustive", s.exhaustive},
                           {"plan_time_us", s.plan_us},
                           {"predictive_plan", s.predictive_plan},
                           {"best_plan", s.best_plan},
                           {"predictive_us", s.predictive_us},
                           {"best_us", s.best_us},
                           {"finalists", s.finalists},
                           {"speed_ratio", s.speed_ratio()}});
    // The GEMM profile measured in the same rounds as the partitions (what predicted_us came
    // from): `kiln tune replay` re-predicts the pairs offline from it.
    if (s.fresh_gemm) j["shapes"].back()["fresh_gemm"] = gemm_profile_to_json(*s.fresh_gemm);
  }
  return j;
}

}  // namespace kiln::tune
