// The suite's roofline plot: one bar per row (problem, size, solution) with the utilization
// U = T_roof / T as its height, coloured by the binding resource; rows that failed their check
// are drawn grey with a cross. Plain SVG text, no plotting library.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/suite.hpp"

namespace kiln::bench {

std::string suite_svg(const std::vector<SuiteRow>& rows, const std::string& title);

// The rows of a `kiln bench suite --json` file (the fields the plot and tables need).
std::vector<SuiteRow> suite_rows_from_json(const nlohmann::json& suite);

}  // namespace kiln::bench
