// The verdict on an outside candidate, in the judgement's JSON whatever ended the judgement: the
// ranks write their report (rows, metrics) only when they finish, so a candidate that did not
// compile, crashed, hung or ran past --time-limit used to leave no JSON at all, and a machine
// reading the results had to tell "rejected" from "never run" by a missing file. The parent of the
// ranks now adds a "verdict" object to the report, or writes a report of the verdict alone.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "core/provenance.hpp"

namespace kiln::bench {

struct CandidateVerdict {
  std::string name;     // the candidate (its source's stem)
  std::string source;   // its path
  std::string problem;  // --problem
  bool accepted = false;
  std::string reason;     // why it was rejected ("" when accepted)
  int exit_code = 0;      // the ranks' exit (0, 1, 124 past the time limit, >= 128 killed), or -1
                          // when it never ran (not compiled)
  std::string build_log;  // nvcc's output where it did not compile (kept up to 8 KiB)
};

nlohmann::json to_json(const CandidateVerdict& verdict);

// Why the ranks' run of a candidate failed, from their exit code and their report (null when they
// wrote none): the first incorrect row's failure where there is one, else what the exit says.
std::string rejection_reason(int exit_code, const nlohmann::json& report, double time_limit_s);

// Adds "verdict" to the report at `path` (the ranks'), or writes {"benchmark": "candidate",
// "provenance", "rows": [], "verdict"} there where there is none or it cannot be read. Nothing
// when `path` is empty.
void record_candidate_verdict(const std::string& path, const CandidateVerdict& verdict,
                              const core::Provenance& provenance);

// The report at `path` (null when it is missing or not JSON).
nlohmann::json read_report(const std::string& path);

}  // namespace kiln::bench
