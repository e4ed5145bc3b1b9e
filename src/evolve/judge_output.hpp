// What the evolution engine quotes from a judge's or a compiler's output when a candidate fails
// (its verdict's failure text, the run's log line).
#pragma once

#include <string>

namespace kiln::evolve {

// From the output's first "error", 300 characters (nvcc's and the judge's build messages).
std::string error_excerpt(const std::string& text);

// Why a judge ended without a report: the last line of its output that names an error, a kill or
// a signal (the launcher's account of its ranks comes last), else the last non-blank line; 300
// characters. A whole set run's judgements once ended so in a burst, good kernels among them
// (H200, 2026-11-29), and their verdicts said only "the log says why" of logs the run did not keep.
std::string last_error_line(const std::string& text);

// Whether a verdict's failure says the judge judged nothing (it ended without a report, or left
// no result at all), as opposed to a judgement against the candidate (incorrect, crashed, too
// slow, did not compile).
bool judged_nothing(const std::string& failure);

}  // namespace kiln::evolve
