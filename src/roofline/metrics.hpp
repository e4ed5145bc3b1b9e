// The suite metrics of KernelBench and ParallelKernelBench over a set of problem outcomes:
//   fast_p = share of problems whose solution is correct and at least p times faster than the
//            reference (p = 0: correct at all; p = 1: correct and not slower);
//   roof_u = share of problems whose solution is correct and reaches U = min(1, T_roof/T) > u.
#pragma once

#include <string>
#include <vector>

namespace kiln::roofline {

struct ProblemOutcome {
  std::string problem;
  bool correct = false;
  double seconds = 0.0;            // the solution's time (max over ranks)
  double reference_seconds = 0.0;  // the reference's time in the same run
  double roof_seconds = 0.0;       // T_roof of the problem at this size
};

double fast_p(const std::vector<ProblemOutcome>& outcomes, double p);
double roof_u(const std::vector<ProblemOutcome>& outcomes, double u);

}  // namespace kiln::roofline
