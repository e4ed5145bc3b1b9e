// The summary of an evolve run over a problem set (issue 20's yardstick): per problem the best
// accepted kernel's U and time, PyTorch eager's time when given, the speedup and the headroom
// (eager / T_roof); over the set the median and geometric-mean U, the share of problems at U >=
// 0.8, the geometric-mean speedup against the geometric-mean headroom, and the evaluations per
// second. Problems that lost (no accepted kernel, or an error) are listed with the rest.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kiln::evolve {

struct SetRow {
  std::string problem;
  std::string family;     // the generator's family ("map", "reduce-axis", ...; "" if none)
  std::string error;      // why the run did not finish (empty when it did)
  bool accepted = false;  // a correct kernel was found
  double best_u = 0.0, best_us = 0.0, roof_us = 0.0;
  std::optional<double> eager_us;  // PyTorch eager, same device, when known
  int evaluations = 0;
  double seconds = 0.0;
  std::string genome;  // the best genome, described
};

// A row from a run folder's report.json (or its log.json when the run was cut before the
// report); `eager_us` from the caller. A folder with neither is a row with `error` set.
SetRow set_row_from_run(const std::string& problem, const std::string& run_dir,
                        std::optional<double> eager_us);

// Rows for `problems` from their folders under `dir` (dir/<problem>, as `kiln evolve set` writes
// them), eager times by problem name where known. A problem without a folder is "not run"; one
// whose folder holds neither a log nor a report was "started, cut before its first evaluation".
std::vector<SetRow> set_rows_from_folder(const std::string& dir,
                                         const std::vector<std::string>& problems,
                                         const std::map<std::string, double>& eager_us);

// The summary as JSON (rows, aggregates over the set and per family: problems, accepted, median
// U, share at U >= 0.8, geometric-mean speedup and headroom) and as Markdown tables.
nlohmann::json summarize_set(const std::vector<SetRow>& rows);
std::string summary_markdown(const nlohmann::json& summary);

}  // namespace kiln::evolve
