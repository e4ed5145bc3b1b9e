// SVG error-CDF plot, quantiles and CSV quoting (see error_cdf_plot.hpp).
#include "tune/error_cdf_plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>

#include "core/error.hpp"
#include "core/xml_escape.hpp"

namespace kiln::tune {
namespace {

// Matplotlib's "tab10": distinct for the first ten series, then it repeats.
constexpr const char* kColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

// A tick step of 1, 2 or 5 times a power of ten giving about five ticks over [0, span].
double nice_step(double span) {
  const double rough = span / 5;
  const double magnitude = std::pow(10.0, std::floor(std::log10(rough)));
  const double norm = rough / magnitude;
  const double factor = norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10;
  return factor * magnitude;
}

}  // namespace

double quantile(std::vector<double> values, double q) {
  KILN_REQUIRE(!values.empty(), "quantile of an empty set of values");
  // Written so that a NaN q fails too.
  KILN_REQUIRE(q >= 0 && q <= 1, fmt::format("quantile: q = {} is outside [0, 1]", q));
  // std::sort needs a strict weak order, which NaN breaks: refuse it instead of returning junk.
  KILN_REQUIRE(std::none_of(values.begin(), values.end(), [](double v) { return std::isnan(v); }),
               "quantile of values that include NaN");
  std::sort(values.begin(), values.end());
  const double position = q * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(position));
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  const double fraction = position - static_cast<double>(lo);
  // lo == hi at q = 1 (and for one value): no interpolation, so no 0 * inf.
  if (lo == hi || fraction == 0) return values[lo];
  return values[lo] + fraction * (values[hi] - values[lo]);
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string error_cdf_svg(const std::vector<CdfSeries>& series, const std::string& title,
                          double reference_percent) {
  // Checked times 1.5 (and values times 100 below) so that the axis range cannot overflow.
  KILN_REQUIRE(std::isfinite(reference_percent * 1.5) && reference_percent >= 0,
               fmt::format("error CDF plot: the target error {}% must be finite and >= 0",
                           reference_percent));
  bool any = false;
  double max_percent = 0;
  for (const CdfSeries& s : series) {
    for (std::size_t i = 0; i < s.values.size(); ++i) {
      const double v = s.values[i];
      KILN_REQUIRE(std::isfinite(v * 100) && v >= 0,
                   fmt::format("error CDF plot: series \"{}\" has value {} at index {}; errors "
                               "must be absolute relative errors, finite and >= 0",
                               s.label, v, i));
      max_percent = std::max(max_percent, v * 100);
    }
    any = any || !s.values.empty();
  }
  KILN_REQUIRE(any, "error CDF plot: every series is empty, there is nothing to draw");

  // The x axis ends on a tick and always shows the target with room to its right.
  double span = std::max(reference_percent * 1.5, max_percent);
  if (span <= 0) span = 1;  // target 0 and every error exactly 0
  const double step = nice_step(span);
  // The small slack keeps 4.5 / 0.5 = 9.000000001 from adding an empty tick.
  const int ticks = static_cast<int>(std::ceil(span / step - 1e-9));
  const double x_max = ticks * step;

  const int left = 70, top = 40, plot_w = 480, plot_h = 300, bottom = 50, legend_w = 330;
  const int legend_line = 18;
  const int width = left + plot_w + 30 + legend_w;
  const int height =
      std::max(top + plot_h + bottom, top + static_cast<int>(series.size()) * legend_line + 20);
  const auto px = [&](double percent) { return left + percent / x_max * plot_w; };
  const auto py = [&](double fraction) { return top + plot_h - fraction * plot_h; };

  std::string s = core::svg_start(width, height, left, title);

  // Grid, ticks and tick labels. A tick label carries a class and sits exactly at its tick's
  // coordinate (the y labels centred by dominant-baseline), so that tests and other readers of
  // the SVG can tell where a value lies without knowing the layout constants.
  for (int i = 0; i <= ticks; ++i) {
    const double x = px(i * step);
    s += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"#eeeeee\"/>\n"
        "<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"black\"/>\n"
        "<text class=\"xtick\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{:g}</text>\n",
        x, top, x, top + plot_h, x, top + plot_h, x, top + plot_h + 5, x, top + plot_h + 18,
        i * step);
  }
  for (int i = 0; i <= 4; ++i) {
    const double f = i / 4.0;
    const double y = py(f);
    s += fmt::format(
        "<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#eeeeee\"/>\n"
        "<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"black\"/>\n"
        "<text class=\"ytick\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" "
        "dominant-baseline=\"middle\">{:.2f}</text>\n",
        left, y, left + plot_w, y, left - 5, y, left, y, left - 8, y, f);
  }
  s += fmt::format(
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"black\"/>\n"
      "<line x1=\"{0}\" y1=\"{3}\" x2=\"{0}\" y2=\"{1}\" stroke=\"black\"/>\n"
      "<text x=\"{4}\" y=\"{5}\" text-anchor=\"middle\">absolute relative error (%)</text>\n"
      "<text x=\"16\" y=\"{6}\" transform=\"rotate(-90 16 {6})\" text-anchor=\"middle\">"
      "fraction of points with at most this error</text>\n",
      left, top + plot_h, left + plot_w, top, left + plot_w / 2, top + plot_h + 40,
      top + plot_h / 2);

  // The target first, so that the data lines are drawn over it.
  const double tx = px(reference_percent);
  s += fmt::format(
      "<line class=\"target\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" "
      "stroke=\"#444444\" "
      "stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n"
      "<text x=\"{3:.1f}\" y=\"{4}\" fill=\"#444444\">target {5:g}%</text>\n",
      tx, top, top + plot_h, tx + 4, top + 12, reference_percent);

  // The CDF as a step function: flat until the next distinct value, then a vertical step to the
  // fraction of points at or below it. Ties make one step, so that a path's V commands count the
  // distinct values.
  const int legend_x = left + plot_w + 30;
  for (std::size_t k = 0; k < series.size(); ++k) {
    const CdfSeries& c = series[k];
    // Colour by position, not by non-empty position: a series keeps its colour across plots
    // where another one happens to be empty.
    const char* colour = kColours[k % std::size(kColours)];
    const int ly = top + static_cast<int>(k) * legend_line;
    if (c.values.empty()) {
      s += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"none\" stroke=\"{}\"/>"
          "<text class=\"legend\" x=\"{}\" y=\"{}\">{}: n=0 (no points)</text>\n",
          legend_x, ly, colour, legend_x + 18, ly + 10, core::xml_escape(c.label));
      continue;
    }
    std::vector<double> percent(c.values.size());
    std::transform(c.values.begin(), c.values.end(), percent.begin(),
                   [](double v) { return v * 100; });
    std::sort(percent.begin(), percent.end());
    const double n = static_cast<double>(percent.size());
    std::string d = fmt::format("M{:.2f} {:.2f}", px(0), py(0));
    for (std::size_t i = 0; i < percent.size(); ++i) {
      if (i + 1 < percent.size() && percent[i + 1] == percent[i]) continue;  // tie: one step
      d += fmt::format(" H{:.2f} V{:.2f}", px(percent[i]), py(static_cast<double>(i + 1) / n));
    }
    d += fmt::format(" H{:.2f}", px(x_max));
    const double mean = std::accumulate(percent.begin(), percent.end(), 0.0) / n;
    const double p90 = quantile(percent, 0.9);
    const std::string label = core::xml_escape(c.label);
    s += fmt::format(
        "<path class=\"cdf\" d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\">"
        "<title>{}</title></path>\n",
        d, colour, label);
    s += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>"
        "<text class=\"legend\" x=\"{}\" y=\"{}\">{}: n={}, mean {:.2f}%, p90 {:.2f}%</text>\n",
        legend_x, ly, colour, legend_x + 18, ly + 10, label, percent.size(), mean, p90);
  }
  s += "</svg>\n";
  return s;
}

}  // namespace kiln::tune
