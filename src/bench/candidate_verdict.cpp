// The verdict on an outside candidate in its JSON (see candidate_verdict.hpp).
#include "bench/candidate_verdict.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

namespace kiln::bench {

nlohmann::json to_json(const CandidateVerdict& verdict) {
  nlohmann::json value = {{"candidate", verdict.name},  {"source", verdict.source},
                          {"problem", verdict.problem}, {"accepted", verdict.accepted},
                          {"reason", verdict.reason},   {"exit_code", verdict.exit_code}};
  constexpr std::size_t kMaxLog = 8192;
  if (!verdict.build_log.empty()) value["build_log"] = verdict.build_log.substr(0, kMaxLog);
  return value;
}

std::string rejection_reason(int exit_code, const nlohmann::json& report, double time_limit_s) {
  if (report.is_object() && report.contains("rows") && report["rows"].is_array()) {
    for (const nlohmann::json& row : report["rows"]) {
      if (row.value("correct", true) || !row.value("skipped", std::string()).empty()) continue;
      return fmt::format("incorrect at {}: {}", row.value("size", std::string("?")),
                         row.value("failure", std::string("(no failure recorded)")));
    }
  }
  if (exit_code == 124) return fmt::format("ran past --time-limit {} s", time_limit_s);
  if (exit_code >= 128) return "a rank crashed or was killed (the log says which and how)";
  if (report.is_null()) return "the ranks ended without a report (the log says why)";
  return "not accepted: nothing was judged, or a rank failed (the log says why)";
}

nlohmann::json read_report(const std::string& path) {
  std::ifstream file(path);
  if (!file) return nullptr;
  nlohmann::json report = nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false);
  if (report.is_discarded()) return nullptr;  // half a report: none
  return report;
}

void record_candidate_verdict(const std::string& path, const CandidateVerdict& verdict,
                              const core::Provenance& provenance) {
  if (path.empty()) return;
  nlohmann::json report = read_report(path);
  if (!report.is_object()) {
    report = {{"benchmark", "candidate"},
              {"provenance", core::to_json(provenance)},
              {"rows", nlohmann::json::array()}};
  }
  report["verdict"] = to_json(verdict);
  core::write_json_file(path, report);  // atomic: a reader never sees half a report
}

}  // namespace kiln::bench
