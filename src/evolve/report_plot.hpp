// The evolution engine's plots (issue 20's final report): the search path of one run (the best
// accepted U after each evaluation, each improvement labelled with the strategies that entered
// the best genome then) and where exported kernels sit on the roofline (bench::suite_svg's bars:
// U, coloured by the binding resource). SVG text, no GPU.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/suite.hpp"
#include "evolve/export.hpp"

namespace kiln::evolve {

// `log` as run logs hold it (history_to_log: genome, evaluation, origin per evaluation).
std::string progress_svg(const nlohmann::json& log, const std::string& title);

// One suite-plot row per exported kernel (problem, size, U, binding; no reference time).
std::vector<bench::SuiteRow> roofline_rows(const std::vector<ExportedKernel>& kernels);

}  // namespace kiln::evolve
