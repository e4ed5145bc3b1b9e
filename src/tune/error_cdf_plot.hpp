// How good a latency predictor is, at a glance: the empirical CDF of its absolute relative errors,
// one line per series (e.g. per problem or per GPU), against a target error. Plain SVG text, no
// plotting library; plus the small numeric and CSV helpers that the same reports need.
#pragma once

#include <string>
#include <vector>

namespace kiln::tune {

// One series of a CDF plot: absolute relative prediction errors as fractions (0.031 = 3.1%).
// Every value must be finite and >= 0: a negative value means the caller forgot the absolute
// value, and the plot refuses it rather than hide that mistake.
struct CdfSeries {
  std::string label;
  std::vector<double> values;
};

// An SVG line plot of the empirical CDF of each series (x: error in %, y: fraction of points with
// at most that error, 0..1). Each non-empty series is one `<path class="cdf">` step function with
// one vertical step per distinct value; a legend gives each series' label, count n, mean and 90th
// percentile; a dashed vertical line at `reference_percent` is labelled "target". The x axis runs
// from 0 to max(1.5 * reference_percent, largest error in %), rounded up to a whole tick.
// Throws kiln::UsageError if every series is empty, if a value is negative or not finite (the
// message names the series), or if reference_percent is negative or not finite.
std::string error_cdf_svg(const std::vector<CdfSeries>& series, const std::string& title,
                          double reference_percent);

// Empirical quantile with linear interpolation between order statistics (numpy's default):
// position q * (n - 1) in the sorted values. Takes the values by copy because it sorts them.
// Throws kiln::UsageError on empty input, a NaN value, or q outside [0, 1].
double quantile(std::vector<double> values, double q);

// One RFC 4180 CSV field: quoted when it holds a comma, a double quote, CR or LF, with each
// double quote doubled; otherwise unchanged.
std::string csv_field(const std::string& text);

}  // namespace kiln::tune
