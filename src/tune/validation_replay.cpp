// kiln tune validate's measurements re-predicted offline (see validation_replay.hpp).
#include "tune/validation_replay.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>

#include "core/error.hpp"
#include "overlap/plan.hpp"
#include "tune/error_cdf_plot.hpp"
#include "tune/tuner_profile.hpp"

namespace kiln::tune {
namespace {

// Fields of one CSV line; a double-quoted field may hold commas ("" is a quote).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  return out;
}

double number(const std::string& text, const std::string& where) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  throw UsageError(fmt::format("{}: \"{}\" is not a finite number", where, text));
}

}  // namespace

std::vector<RecordedPoint> parse_validation_csv(const std::string& text,
                                                const std::string& source) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line)) throw UsageError(source + ": empty (no header line)");
  const std::vector<std::string> header = csv_fields(line);
  const auto column = [&](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) {
      throw UsageError(
          fmt::format("{}: no column \"{}\" (not a kiln tune validate CSV?)", source, name));
    }
    return static_cast<std::size_t>(it - header.begin());
  };
  const std::size_t shape = column("shape"), plan = column("plan"),
                    measured = column("measured_us"), predicted = column("predicted_us"),
                    saved = column("predicted_saved_us");
  std::vector<RecordedPoint> points;
  for (int number_of_line = 2; std::getline(in, line); ++number_of_line) {
    if (line.empty() || line == "\r") continue;
    const std::string where = fmt::format("{} line {}", source, number_of_line);
    const std::vector<std::string> f = csv_fields(line);
    if (f.size() != header.size()) {
      throw UsageError(
          fmt::format("{}: {} fields, the header has {}", where, f.size(), header.size()));
    }
    RecordedPoint p;
    p.shape = overlap::parse_shape(f[shape], where + " shape");
    p.plan = f[plan];
    overlap::parse_plan(p.plan, where + " plan");
    p.measured_us = number(f[measured], where + " measured_us");
    p.predicted_us = number(f[predicted], where + " predicted_us");
    p.predicted_saved_us = number(f[saved], where + " predicted_saved_us");
    if (!(p.measured_us > 0)) throw UsageError(where + ": measured_us must be positive");
    points.push_back(std::move(p));
  }
  if (points.empty()) throw UsageError(source + ": no measured pair");
  return points;
}

ReplayResult replay_validation(const nlohmann::json& validation,
                               const std::vector<RecordedPoint>& points,
                               const std::string& source) {
  if (!validation.is_object() || !validation.contains("profile")) {
    throw UsageError(source + ": no \"profile\" (not a kiln tune validate JSON?)");
  }
  const TunerProfile saved = TunerProfile::from_json(validation.at("profile"), source + " profile");
  // Each shape's fresh GEMM profile, where the record has one.
  std::map<std::string, GemmProfile> fresh;
  for (const nlohmann::json& s : validation.value("shapes", nlohmann::json::array())) {
    if (!s.contains("fresh_gemm")) continue;
    const std::string name = s.value("shape", std::string());
    fresh[name] = gemm_profile_from_json(s.at("fresh_gemm"), source + " shape " + name);
  }
  ReplayResult r;
  std::map<std::string, std::size_t> shape_index;
  for (const RecordedPoint& p : points) {
    const std::string name = overlap::shape_name(p.shape);
    const auto it = fresh.find(name);
    TunerProfile profile = saved;  // as validate: the saved profile with this shape's fresh GEMM
    if (it != fresh.end()) {
      const GemmProfile& g = it->second;
      std::erase_if(profile.gemms, [&](const GemmProfile& e) {
        return e.base_plan == g.base_plan && e.shape.m == g.shape.m && e.shape.n == g.shape.n &&
               e.shape.k == g.shape.k;
      });
      profile.gemms.push_back(g);
    }
    const PlanCandidate c =
        predict_plan(profile, p.shape, overlap::parse_plan(p.plan, source + " plan"));
    const double predicted = c.predicted_us - c.reorder_us;
    const double recorded = it != fresh.end() ? p.predicted_us : p.predicted_saved_us;
    r.predicted_us.push_back(predicted);
    r.errors.push_back((predicted - p.measured_us) / p.measured_us);
    r.max_change_us = std::max(r.max_change_us, std::abs(predicted - recorded));
    auto [slot, added] = shape_index.emplace(name, r.shapes.size());
    if (added) r.shapes.push_back({p.shape, 0, it != fresh.end(), 0.0, 0.0});
    ReplayedShape& s = r.shapes[slot->second];
    ++s.points;
    s.mean_error += r.errors.back();
    s.mean_abs_error += std::abs(r.errors.back());
  }
  for (ReplayedShape& s : r.shapes) {
    s.mean_error /= s.points;
    s.mean_abs_error /= s.points;
  }
  std::vector<double> abs_errors;
  for (const double e : r.errors) abs_errors.push_back(std::abs(e));
  double sum = 0.0;
  for (const double e : abs_errors) sum += e;
  r.mean_abs_error = sum / abs_errors.size();
  r.p90_abs_error = quantile(abs_errors, 0.9);  // as validate's summary
  r.max_abs_error = *std::max_element(abs_errors.begin(), abs_errors.end());
  return r;
}

}  // namespace kiln::tune
