// `kiln evolve export` (issue 20): what users take away from a run. For each run folder, the best
// accepted kernel of its log (a finished or an interrupted run) is written as a standalone CUDA
// source with kiln's C entry point (`kiln_candidate_run`, include/kiln/candidate.h, copied beside
// it so the folder compiles on its own), and a JSON file with its problem, size, GPU, genome,
// strategies (with their descriptions) and measurements.
#pragma once

#include <string>
#include <vector>

namespace kiln::evolve {

struct ExportedKernel {
  std::string run;  // the run folder it came from
  std::string problem, size;
  std::string source_path, json_path;
  double fitness = 0.0;            // U
  double us = 0.0, roof_us = 0.0;  // the judge's median and T_roof
  std::string binding;             // the roofline's binding resource
};

// Exports the best kernel of every run folder in `runs` into `out` (created if needed), as
// <problem>-<size>.cu and .json; `candidate_header` is the path of include/kiln/candidate.h,
// copied to out/kiln/candidate.h. Throws kiln::UsageError naming the folder when one holds no
// run (log.json, run.json) or no accepted kernel, or when two runs share a problem and size.
std::vector<ExportedKernel> export_runs(const std::vector<std::string>& runs,
                                        const std::string& out,
                                        const std::string& candidate_header);

}  // namespace kiln::evolve
