// The summary of an evolve run over a problem set (see set_summary.hpp).
#include "evolve/set_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "evolve/candidate_evaluator.hpp"
#include "evolve/search.hpp"
#include "evolve/strategy.hpp"

namespace kiln::evolve {
namespace {

double geomean(const std::vector<double>& values) {
  if (values.empty()) return 0.0;
  double log_sum = 0.0;
  for (const double v : values) log_sum += std::log(v);
  return std::exp(log_sum / static_cast<double>(values.size()));
}

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace

SetRow set_row_from_run(const std::string& problem, const std::string& run_dir,
                        std::optional<double> eager_us) {
  SetRow row;
  row.problem = problem;
  if (const std::optional<Family> family = generated_family(problem))
    row.family = family_name(*family);
  row.eager_us = eager_us;
  const std::filesystem::path dir(run_dir);
  try {
    // A report, unless a resumed pass at a larger budget was cut after it (its log is longer).
    std::size_t logged = 0;
    if (std::ifstream log_file{dir / "log.json"}) logged = nlohmann::json::parse(log_file).size();
    std::ifstream report{dir / "report.json"};
    const nlohmann::json r = report ? nlohmann::json::parse(report) : nlohmann::json::object();
    if (report && r.value("evaluations", std::size_t{0}) >= logged) {
      const Evaluation best = Evaluation::from_json(r.at("best").at("evaluation"), "report.json");
      row.accepted = best.correct;
      row.best_u = best.fitness();
      row.best_us = best.us;
      row.roof_us = best.roof_us;
      row.evaluations = r.at("evaluations").get<int>();
      row.seconds = r.at("seconds").get<double>();
      row.genome = Genome::from_json(r.at("best").at("genome"), "report.json").describe();
      return row;
    }
    // Cut before its report: the best of the log so far.
    std::ifstream log_file(dir / "log.json");
    if (!log_file) {
      row.error = "no report.json or log.json";
      return row;
    }
    const nlohmann::json log = nlohmann::json::parse(log_file);
    row.evaluations = static_cast<int>(log.size());
    row.error = "cut before its report (best of the log so far)";
    for (const auto& entry : log) {
      const Evaluation e = Evaluation::from_json(entry.at("evaluation"), "log.json");
      if (e.roof_us > 0) row.roof_us = e.roof_us;
      if (e.correct && e.fitness() > row.best_u) {
        row.accepted = true;
        row.best_u = e.fitness();
        row.best_us = e.us;
        row.genome = Genome::from_json(entry.at("genome"), "log.json").describe();
      }
    }
  } catch (const std::exception& e) {
    row.error = fmt::format("unreadable run folder: {}", e.what());
  }
  return row;
}

std::vector<SetRow> set_rows_from_folder(const std::string& dir,
                                         const std::vector<std::string>& problems,
                                         const std::map<std::string, double>& eager_us) {
  std::vector<SetRow> rows;
  for (const std::string& problem : problems) {
    const auto it = eager_us.find(problem);
    const std::filesystem::path run = std::filesystem::path(dir) / problem;
    SetRow row =
        set_row_from_run(problem, run.string(),
                         it == eager_us.end() ? std::nullopt : std::optional<double>(it->second));
    if (!std::filesystem::exists(run))
      row.error = "not run";
    else if (!std::filesystem::exists(run / "log.json") &&
             !std::filesystem::exists(run / "report.json"))
      row.error = "started, cut before its first evaluation";
    rows.push_back(row);
  }
  return rows;
}

namespace {

// The set's aggregates over `rows` (a problem that lost counts in U's statistics with U 0: it is
// reported, not dropped).
nlohmann::json aggregates(const std::vector<SetRow>& rows) {
  std::vector<double> us, positive, speedups, headrooms;
  int at_08 = 0, evaluations = 0;
  double seconds = 0.0;
  for (const SetRow& r : rows) {
    us.push_back(r.accepted ? r.best_u : 0.0);
    if (r.accepted && r.best_u > 0) positive.push_back(r.best_u);
    at_08 += r.accepted && r.best_u >= 0.8 ? 1 : 0;
    evaluations += r.evaluations;
    seconds += r.seconds;
    if (r.accepted && r.eager_us && *r.eager_us > 0 && r.roof_us > 0) {
      speedups.push_back(*r.eager_us / r.best_us);
      headrooms.push_back(*r.eager_us / r.roof_us);
    }
  }
  nlohmann::json out;
  out["problems"] = rows.size();
  out["accepted"] = positive.size();
  out["median_u"] = median(us);
  out["geomean_u_accepted"] = geomean(positive);
  out["share_u_at_least_0.8"] = rows.empty() ? 0.0 : static_cast<double>(at_08) / rows.size();
  if (!speedups.empty()) {
    out["geomean_speedup_over_eager"] = geomean(speedups);
    out["geomean_headroom"] = geomean(headrooms);
    out["share_of_headroom"] = geomean(speedups) / geomean(headrooms);
  }
  out["evaluations"] = evaluations;
  out["seconds"] = seconds;
  out["evaluations_per_second"] = seconds > 0 ? evaluations / seconds : 0.0;
  return out;
}

}  // namespace

nlohmann::json summarize_set(const std::vector<SetRow>& rows) {
  nlohmann::json out = aggregates(rows);
  out["rows"] = nlohmann::json::array();
  std::map<std::string, std::vector<SetRow>> by_family;
  for (const SetRow& r : rows) {
    nlohmann::json j = {{"problem", r.problem},
                        {"family", r.family},
                        {"accepted", r.accepted},
                        {"u", r.best_u},
                        {"us", r.best_us},
                        {"roof_us", r.roof_us},
                        {"evaluations", r.evaluations},
                        {"seconds", r.seconds},
                        {"genome", r.genome},
                        {"error", r.error}};
    if (r.eager_us && *r.eager_us > 0 && r.roof_us > 0) {
      j["eager_us"] = *r.eager_us;
      j["headroom"] = *r.eager_us / r.roof_us;
      if (r.accepted) j["speedup"] = *r.eager_us / r.best_us;
    }
    out["rows"].push_back(j);
    by_family[r.family.empty() ? "-" : r.family].push_back(r);
  }
  out["families"] = nlohmann::json::object();
  for (const auto& [family, family_rows] : by_family)
    out["families"][family] = aggregates(family_rows);
  return out;
}

std::string summary_markdown(const nlohmann::json& s) {
  std::string md =
      "| problem | U | time (us) | T_roof (us) | eager (us) | speedup | headroom | evaluations | "
      "best genome / what happened |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : s.at("rows")) {
    const auto number = [&](const char* key, const char* format) {
      return r.contains(key) ? fmt::format(fmt::runtime(format), r.at(key).get<double>())
                             : std::string("-");
    };
    std::string what = r.at("genome").get<std::string>();
    if (!r.at("error").get<std::string>().empty())
      what = r.at("error").get<std::string>() + (what.empty() ? "" : ": " + what);
    md += fmt::format(
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", r.at("problem").get<std::string>(),
        r.at("accepted").get<bool>() ? fmt::format("{:.3f}", r.at("u").get<double>())
                                     : "none accepted",
        r.at("accepted").get<bool>() ? number("us", "{:.1f}") : "-", number("roof_us", "{:.1f}"),
        number("eager_us", "{:.1f}"), number("speedup", "{:.2f}x"), number("headroom", "{:.2f}x"),
        r.at("evaluations").get<int>(), what);
  }
  md += fmt::format(
      "\n{} problems, {} with an accepted kernel; median U {:.3f} (problems without one count as "
      "0), geometric-mean U {:.3f} over the accepted, U >= 0.8 on {:.0f}%",
      s.at("problems").get<int>(), s.at("accepted").get<int>(), s.at("median_u").get<double>(),
      s.at("geomean_u_accepted").get<double>(), 100.0 * s.at("share_u_at_least_0.8").get<double>());
  if (s.contains("share_of_headroom"))
    md += fmt::format(
        "; {:.2f}x over PyTorch eager (geometric mean) of a {:.2f}x headroom: {:.0f}%",
        s.at("geomean_speedup_over_eager").get<double>(), s.at("geomean_headroom").get<double>(),
        100.0 * s.at("share_of_headroom").get<double>());
  // Each run's own time: with `evolve set --parallel-problems` runs overlap (and wait for the
  // GPU's turn), so this undercounts the rate; OUT/set-run.json holds a set run's wall time.
  md += fmt::format(
      "; {} evaluations, the runs' own times adding up to {:.0f} s ({:.2f} per second; runs "
      "searched at once overlap, see set-run.json for a set run's wall time).\n",
      s.at("evaluations").get<int>(), s.at("seconds").get<double>(),
      s.at("evaluations_per_second").get<double>());
  if (s.contains("families") && !s.at("families").empty()) {
    md +=
        "\n| family | problems | accepted | median U | U >= 0.8 | speedup over eager | headroom | "
        "evaluations/s |\n|---|---|---|---|---|---|---|---|\n";
    for (const auto& [family, f] : s.at("families").items()) {
      const auto ratio = [&](const char* key) {
        return f.contains(key) ? fmt::format("{:.2f}x", f.at(key).get<double>()) : std::string("-");
      };
      md += fmt::format(
          "| {} | {} | {} | {:.3f} | {:.0f}% | {} | {} | {:.2f} |\n", family,
          f.at("problems").get<int>(), f.at("accepted").get<int>(), f.at("median_u").get<double>(),
          100.0 * f.at("share_u_at_least_0.8").get<double>(), ratio("geomean_speedup_over_eager"),
          ratio("geomean_headroom"), f.at("evaluations_per_second").get<double>());
    }
  }
  return md;
}

}  // namespace kiln::evolve
