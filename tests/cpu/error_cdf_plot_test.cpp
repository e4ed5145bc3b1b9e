// The error-CDF plot, its quantile and the CSV field quoting, without a GPU. Positions in the SVG
// are checked against its own tick labels, so the tests do not depend on the layout constants.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "tune/error_cdf_plot.hpp"

namespace kiln::tune {
namespace {

// One drawing command of a path's d attribute: its letter and its numbers.
struct Command {
  char op;
  std::vector<double> args;
};

std::vector<Command> parse_path(const std::string& d) {
  std::vector<Command> out;
  const std::regex token("([MHV])([-0-9. ]+)");
  for (auto it = std::sregex_iterator(d.begin(), d.end(), token); it != std::sregex_iterator();
       ++it) {
    Command c{(*it)[1].str()[0], {}};
    std::istringstream numbers((*it)[2].str());
    for (double v; numbers >> v;) c.args.push_back(v);
    out.push_back(c);
  }
  return out;
}

std::vector<std::vector<Command>> cdf_paths(const std::string& svg) {
  std::vector<std::vector<Command>> out;
  const std::regex path("<path class=\"cdf\" d=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), path); it != std::sregex_iterator();
       ++it) {
    out.push_back(parse_path((*it)[1]));
  }
  return out;
}

// Tick label -> its x (class "xtick") or y (class "ytick") coordinate.
std::map<std::string, double> ticks(const std::string& svg, const std::string& axis) {
  std::map<std::string, double> out;
  const std::regex tick("<text class=\"" + axis +
                        "tick\" x=\"([-0-9.]+)\" y=\"([-0-9.]+)\"[^>]*>([^<]*)</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tick); it != std::sregex_iterator();
       ++it) {
    out[(*it)[3]] = std::stod((*it)[axis == "x" ? 1 : 2]);
  }
  return out;
}

int count_of(const std::vector<Command>& path, char op) {
  int n = 0;
  for (const Command& c : path) n += c.op == op;
  return n;
}

template <typename F>
std::string usage_error_of(F&& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no UsageError)";
}

TEST(Quantile, InterpolatesLinearlyBetweenOrderStatistics) {
  const std::vector<double> v = {3, 1, 4, 2};  // unsorted on purpose: quantile sorts its copy
  EXPECT_DOUBLE_EQ(quantile(v, 0), 1);
  EXPECT_DOUBLE_EQ(quantile(v, 1), 4);
  EXPECT_DOUBLE_EQ(quantile(v, 0.5), 2.5);    // position 1.5: halfway between 2 and 3
  EXPECT_DOUBLE_EQ(quantile(v, 0.25), 1.75);  // position 0.75
  EXPECT_DOUBLE_EQ(quantile(v, 0.9), 3.7);    // position 2.7: 3 + 0.7 * (4 - 3)
  EXPECT_DOUBLE_EQ(quantile({5}, 0.3), 5);
  EXPECT_DOUBLE_EQ(quantile({2, 2, 2}, 0.6), 2);
  EXPECT_DOUBLE_EQ(quantile({0, 10}, 0.1), 1);
}

TEST(Quantile, RefusesEmptyInputNanAndQOutsideTheUnitInterval) {
  EXPECT_THROW(quantile({}, 0.5), UsageError);
  EXPECT_THROW(quantile({1, 2}, -0.01), UsageError);
  EXPECT_THROW(quantile({1, 2}, 1.01), UsageError);
  EXPECT_THROW(quantile({1, 2}, std::numeric_limits<double>::quiet_NaN()), UsageError);
  EXPECT_THROW(quantile({1, std::numeric_limits<double>::quiet_NaN()}, 0.5), UsageError);
}

TEST(CsvField, QuotesOnlyWhenRfc4180NeedsIt) {
  EXPECT_EQ(csv_field("plain text"), "plain text");
  EXPECT_EQ(csv_field(""), "");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("\""), "\"\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field("cr\r"), "\"cr\r\"");
  EXPECT_EQ(csv_field("it's; fine"), "it's; fine");
}

TEST(ErrorCdfPlot, OneStepPathPerNonEmptySeriesWithLegendAndTarget) {
  const std::vector<CdfSeries> series = {
      {"A", {0.01, 0.04, 0.02}},       // 1%, 2%, 4%: three steps
      {"B", {0.05, 0.0, 0.10, 0.05}},  // 0%, 5% twice, 10%: a tie is one step
      {"C", {}},                       // empty: in the legend, no path
  };
  const std::string svg = error_cdf_svg(series, "errors", 3.0);

  const auto paths = cdf_paths(svg);
  ASSERT_EQ(paths.size(), 2u);
  EXPECT_EQ(count_of(paths[0], 'V'), 3);
  EXPECT_EQ(count_of(paths[1], 'V'), 3);

  // Largest error 10% > 1.5 * 3%: the axis is 0..10 in steps of 2.
  const auto xt = ticks(svg, "x");
  const auto yt = ticks(svg, "y");
  ASSERT_EQ(xt.size(), 6u);
  ASSERT_TRUE(xt.count("0") && xt.count("2") && xt.count("10"));
  ASSERT_TRUE(yt.count("0.00") && yt.count("1.00"));
  const auto x_of = [&](double percent) {
    return xt.at("0") + percent / 10 * (xt.at("10") - xt.at("0"));
  };
  const auto y_of = [&](double f) { return yt.at("0.00") + f * (yt.at("1.00") - yt.at("0.00")); };
  EXPECT_NEAR(x_of(2), xt.at("2"), 0.1);  // the axis is linear

  // Series A: from (0, 0) flat to 1%, up to 1/3, ..., up to 1 at 4%, flat to the axis' end.
  const auto& a = paths[0];
  ASSERT_EQ(a.size(), 8u);  // M, 3 x (H, V), H
  EXPECT_EQ(a[0].op, 'M');
  EXPECT_NEAR(a[0].args.at(0), x_of(0), 0.1);
  EXPECT_NEAR(a[0].args.at(1), y_of(0), 0.1);
  const double expected[][2] = {{1, 1.0 / 3}, {2, 2.0 / 3}, {4, 1.0}};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(a[1 + 2 * i].op, 'H');
    EXPECT_NEAR(a[1 + 2 * i].args.at(0), x_of(expected[i][0]), 0.1) << "step " << i;
    EXPECT_EQ(a[2 + 2 * i].op, 'V');
    EXPECT_NEAR(a[2 + 2 * i].args.at(0), y_of(expected[i][1]), 0.1) << "step " << i;
  }
  EXPECT_EQ(a[7].op, 'H');
  EXPECT_NEAR(a[7].args.at(0), x_of(10), 0.1);

  // Series B jumps by 2/4 at the tied 5%.
  const auto& b = paths[1];
  ASSERT_EQ(b.size(), 8u);
  EXPECT_NEAR(b[2].args.at(0), y_of(0.25), 0.1);  // 0% already holds one point of four
  EXPECT_NEAR(b[3].args.at(0), x_of(5), 0.1);
  EXPECT_NEAR(b[4].args.at(0), y_of(0.75), 0.1);

  // Legend: n, mean and p90 in %. A: mean 7/3, p90 at position 1.8 = 2 + 0.8 * 2.
  EXPECT_NE(svg.find("A: n=3, mean 2.33%, p90 3.60%"), std::string::npos) << svg;
  // B: mean 20/4, p90 at position 2.7 of {0, 5, 5, 10} = 5 + 0.7 * 5.
  EXPECT_NE(svg.find("B: n=4, mean 5.00%, p90 8.50%"), std::string::npos);
  EXPECT_NE(svg.find("C: n=0"), std::string::npos);

  // The dashed target line at 3%, labelled.
  const std::regex target(
      "<line class=\"target\" x1=\"([0-9.]+)\" y1=\"[0-9.]+\" "
      "x2=\"([0-9.]+)\"[^>]*stroke-dasharray");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(svg, m, target));
  EXPECT_NEAR(std::stod(m[1]), x_of(3), 0.1);
  EXPECT_EQ(m[1], m[2]);  // vertical
  EXPECT_NE(svg.find(">target 3%</text>"), std::string::npos);
}

TEST(ErrorCdfPlot, AxisCoversHalfAgainTheTargetAndEndsOnANiceTick) {
  // Every error well under the target: the axis runs to 1.5 * 3% = 4.5%, rounded up to 5.
  const std::string small = error_cdf_svg({{"tiny", {0.001, 0.01}}}, "t", 3.0);
  const auto xt = ticks(small, "x");
  ASSERT_EQ(xt.size(), 6u);
  EXPECT_TRUE(xt.count("5"));
  EXPECT_FALSE(xt.count("6"));
  std::smatch m;
  ASSERT_TRUE(std::regex_search(small, m, std::regex("<line class=\"target\" x1=\"([0-9.]+)\"")));
  EXPECT_NEAR(std::stod(m[1]), xt.at("3"), 0.1);

  // A 37% outlier: the axis ends on the next tick, 40, and the line runs flat to it.
  const std::string wide = error_cdf_svg({{"outlier", {0.02, 0.37}}}, "t", 3.0);
  const auto wt = ticks(wide, "x");
  EXPECT_TRUE(wt.count("40"));
  EXPECT_FALSE(wt.count("50"));
  const auto paths = cdf_paths(wide);
  ASSERT_EQ(paths.size(), 1u);
  EXPECT_NEAR(paths[0].back().args.at(0), wt.at("40"), 0.1);
}

TEST(ErrorCdfPlot, EscapesTitleAndLabels) {
  const std::string svg = error_cdf_svg({{"a<b", {0.01}}}, "cdf <v2> & \"x\"", 3.0);
  EXPECT_NE(svg.find("cdf &lt;v2&gt; &amp; &quot;x&quot;"), std::string::npos);
  EXPECT_NE(svg.find("a&lt;b: n=1"), std::string::npos);
  EXPECT_EQ(svg.find("<v2>"), std::string::npos);
  EXPECT_EQ(svg.find("a<b"), std::string::npos);
}

TEST(ErrorCdfPlot, RefusesNothingToDrawAndBadValuesNamingTheSeries) {
  EXPECT_THROW(error_cdf_svg({}, "t", 3.0), UsageError);
  EXPECT_THROW(error_cdf_svg({{"a", {}}, {"b", {}}}, "t", 3.0), UsageError);

  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (double bad : {-0.01, nan, inf, -inf}) {
    const std::string what = usage_error_of([&] {
      error_cdf_svg({{"good", {0.01}}, {"gemm 4k", {0.02, bad}}}, "t", 3.0);
    });
    EXPECT_NE(what.find("gemm 4k"), std::string::npos) << bad << ": " << what;
    EXPECT_EQ(what.find("good"), std::string::npos) << what;
  }
  EXPECT_THROW(error_cdf_svg({{"a", {0.01}}}, "t", -1.0), UsageError);
  EXPECT_THROW(error_cdf_svg({{"a", {0.01}}}, "t", nan), UsageError);
}

}  // namespace
}  // namespace kiln::tune
