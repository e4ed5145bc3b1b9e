// SVG roofline plot of a suite (see suite_plot.hpp).
#include "bench/suite_plot.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "core/xml_escape.hpp"

namespace kiln::bench {
namespace {

std::string colour_of(const std::string& binding) {
  if (binding == "compute") return "#d62728";
  if (binding == "memory") return "#1f77b4";
  if (binding == "interconnect") return "#2ca02c";
  return "#7f7f7f";
}

}  // namespace

std::string suite_svg(const std::vector<SuiteRow>& all_rows, const std::string& title) {
  std::vector<SuiteRow> rows;  // skipped rows were not measured: no bar
  for (const SuiteRow& r : all_rows)
    if (r.skipped.empty()) rows.push_back(r);
  const int bar = 18, gap = 6, left = 60, top = 40, plot_h = 300, label_h = 150;
  const int width = left + static_cast<int>(rows.size()) * (bar + gap) + 180;
  const int height = top + plot_h + label_h;
  std::string s = core::svg_start(width, height, left, title);
  // Axis and grid: U from 0 to 1.
  for (int i = 0; i <= 4; ++i) {
    const double u = i / 4.0;
    const int y = top + plot_h - static_cast<int>(u * plot_h);
    s += fmt::format(
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#dddddd\"/>\n"
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{:.2f}</text>\n",
        left, y, width - 170, y, left - 6, y + 4, u);
  }
  s += fmt::format(
      "<text x=\"14\" y=\"{}\" transform=\"rotate(-90 14 {})\" text-anchor=\"middle\">"
      "U = T_roof / T</text>\n",
      top + plot_h / 2, top + plot_h / 2);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const SuiteRow& r = rows[i];
    const int x = left + static_cast<int>(i) * (bar + gap) + gap;
    const double u = std::clamp(r.utilization, 0.0, 1.0);
    const int h = std::max(1, static_cast<int>(u * plot_h));
    const bool ok = r.correct && r.reference_check.empty();
    s += fmt::format(
        "<rect class=\"bar\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\">"
        "<title>{} {} {}: U {:.3f}{}, {}{}</title></rect>\n",
        x, top + plot_h - h, bar, h, ok ? colour_of(r.binding) : "#bbbbbb",
        core::xml_escape(r.problem), core::xml_escape(r.size), core::xml_escape(r.solution),
        r.utilization,
        r.speedup > 0 ? fmt::format(", {:.2f}x the reference", r.speedup) : std::string(),
        core::xml_escape(r.binding), ok ? "" : ", FAILED");
    if (!ok) {
      s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#d62728\">x</text>\n",
                       x + bar / 2, top + plot_h - h - 4);
    }
    const int ly = top + plot_h + 8;
    s += fmt::format("<text x=\"{}\" y=\"{}\" transform=\"rotate(60 {} {})\">{} {}</text>\n",
                     x + bar / 2, ly, x + bar / 2, ly, core::xml_escape(r.problem),
                     core::xml_escape(r.size));
  }
  // Legend.
  int ly = top + 10;
  for (const char* binding : {"compute", "memory", "interconnect"}) {
    s += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"{}\">{}-bound</text>\n",
        width - 160, ly, colour_of(binding), width - 142, ly + 10, binding);
    ly += 18;
  }
  s += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"#bbbbbb\"/>"
      "<text x=\"{}\" y=\"{}\">failed check</text>\n",
      width - 160, ly, width - 142, ly + 10);
  s += "</svg>\n";
  return s;
}

std::vector<SuiteRow> suite_rows_from_json(const nlohmann::json& suite) {
  if (!suite.contains("rows") || !suite["rows"].is_array()) {
    throw UsageError("not a `kiln bench suite --json` file: no \"rows\" array");
  }
  std::vector<SuiteRow> rows;
  for (const nlohmann::json& j : suite["rows"]) {
    SuiteRow r;
    r.problem = j.value("problem", "");
    r.category = j.value("category", "");
    r.size = j.value("size", "");
    r.solution = j.value("solution", "");
    const std::string check = j.value("reference_check", "passed");
    r.reference_check = check == "passed" ? "" : check;
    r.correct = j.value("correct", false);
    r.failure = j.value("failure", "");
    if (j.contains("reference_us")) r.reference_us.median = j["reference_us"].value("median", 0.0);
    if (j.contains("solution_us")) r.solution_us.median = j["solution_us"].value("median", 0.0);
    r.speedup = j.value("speedup", 0.0);
    r.roof_us = j.value("roof_us", 0.0);
    r.utilization = j.value("utilization", 0.0);
    r.binding = j.value("binding", "");
    r.skipped = j.value("skipped", "");
    rows.push_back(r);
  }
  return rows;
}

}  // namespace kiln::bench
