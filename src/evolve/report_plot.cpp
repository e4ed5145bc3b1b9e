// The evolution engine's plots (see report_plot.hpp).
#include "evolve/report_plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/xml_escape.hpp"
#include "evolve/genome.hpp"
#include "evolve/search.hpp"

namespace kiln::evolve {

namespace {

// "+a +b -c": the strategies of `now` that `before` lacks, then those it dropped.
std::string strategy_change(const std::set<std::string>& before, const std::set<std::string>& now) {
  std::string text;
  for (const std::string& s : now)
    if (!before.count(s)) text += (text.empty() ? "+" : " +") + s;
  for (const std::string& s : before)
    if (!now.count(s)) text += (text.empty() ? "-" : " -") + s;
  return text.empty() ? "knobs" : text;
}

}  // namespace

std::string progress_svg(const nlohmann::json& log, const std::string& title) {
  const int left = 60, top = 40, plot_w = 640, plot_h = 300, bottom = 50, label_w = 360;
  const int width = left + plot_w + label_w, height = top + plot_h + bottom;
  std::string s = core::svg_start(width, height, left, title);
  const std::size_t n = log.size();
  const auto x_of = [&](std::size_t i) {
    return left + static_cast<int>(plot_w * (n <= 1 ? 0.0 : static_cast<double>(i) / (n - 1)));
  };
  const auto y_of = [&](double u) {
    return top + plot_h - static_cast<int>(std::clamp(u, 0.0, 1.0) * plot_h);
  };
  for (int i = 0; i <= 4; ++i) {
    const double u = i / 4.0;
    s += fmt::format(
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#dddddd\"/>\n"
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{:.2f}</text>\n",
        left, y_of(u), left + plot_w, y_of(u), left - 6, y_of(u) + 4, u);
  }
  s += fmt::format(
      "<text x=\"14\" y=\"{}\" transform=\"rotate(-90 14 {})\" text-anchor=\"middle\">best U "
      "accepted so far</text>\n<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">evaluation (1..{})"
      "</text>\n",
      top + plot_h / 2, top + plot_h / 2, left + plot_w / 2, top + plot_h + 36, n);
  std::string points;
  std::vector<std::string> labels;
  double best = -1.0;
  std::set<std::string> best_strategies;
  for (std::size_t i = 0; i < n; ++i) {
    const Evaluation e = Evaluation::from_json(log[i].at("evaluation"), "log");
    if (e.correct && e.fitness() > best) {
      const Genome g = Genome::from_json(log[i].at("genome"), "log");
      const std::string change =
          best < 0 ? "first: " + g.describe() : strategy_change(best_strategies, g.strategies);
      best = e.fitness();
      best_strategies = g.strategies;
      s += fmt::format(
          "<circle class=\"improvement\" cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"#1f77b4\"><title>"
          "evaluation {}: U {:.3f} ({}), {}</title></circle>\n",
          x_of(i), y_of(best), i + 1, best, core::xml_escape(log[i].value("origin", "")),
          core::xml_escape(change));
      labels.push_back(fmt::format("#{} U {:.3f}: {}", i + 1, best, change));
    }
    if (best >= 0) points += fmt::format("{},{} ", x_of(i), y_of(best));
  }
  if (points.empty()) {
    s += fmt::format(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">no accepted kernel in {} "
        "evaluations</text>\n",
        left + plot_w / 2, top + plot_h / 2, n);
  } else {
    s += fmt::format(
        "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"{}\"/>\n", points);
  }
  // The path in words, beside the plot: which strategies entered the best genome when.
  const std::size_t shown = std::min<std::size_t>(labels.size(), plot_h / 14);
  for (std::size_t k = 0; k < shown; ++k) {
    const std::size_t from = labels.size() - shown;  // the latest improvements
    s += fmt::format("<text class=\"step\" x=\"{}\" y=\"{}\">{}</text>\n", left + plot_w + 12,
                     top + 12 + static_cast<int>(k) * 14, core::xml_escape(labels[from + k]));
  }
  s += "</svg>\n";
  return s;
}

std::vector<bench::SuiteRow> roofline_rows(const std::vector<ExportedKernel>& kernels) {
  std::vector<bench::SuiteRow> rows;
  for (const ExportedKernel& k : kernels) {
    bench::SuiteRow r;
    r.problem = k.problem;
    r.size = k.size;
    r.solution = "evolved";
    r.correct = true;  // export takes accepted kernels only
    r.utilization = k.fitness;
    r.roof_us = k.roof_us;
    r.solution_us.median = k.us;
    r.binding = k.binding;
    rows.push_back(r);
  }
  return rows;
}

}  // namespace kiln::evolve
