// How the cuBLAS baseline picks among cublasLt's heuristic candidates from their timings
// (overlap/cublas_gemm.cpp times them; this decides): pure functions, so the rule has CPU tests.
// Candidates are numbered in the heuristic's order; 0 is the heuristic's first, torch.matmul's
// choice.
#pragma once

#include <vector>

namespace kiln::overlap {

// Candidates (indices into `screened`, short-burst medians) to time again under sustained load:
// the fastest `count` within `within` (relative) of the fastest, plus candidate 0 when it was
// screened (`first_screened`) and is not among them. Fastest first, candidate 0 last if added.
std::vector<int> sustained_candidates(const std::vector<double>& screened, bool first_screened,
                                      int count = 3, double within = 0.10);

// The pick among `timed` (indices into `medians`, all timed in the same last stage): the fastest,
// or candidate 0 when it is among them and within `tie` (relative) of the fastest.
int pick_candidate(const std::vector<double>& medians, const std::vector<int>& timed,
                   double tie = 0.01);

}  // namespace kiln::overlap
