// Kernel counters for --ncu guidance (see kernel_counters.hpp).
#include "evolve/kernel_counters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "core/error.hpp"

namespace kiln::evolve {
namespace {

constexpr const char* kDuration = "gpu__time_duration.sum";
constexpr const char* kDram = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
constexpr const char* kSm = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
constexpr const char* kWarps = "sm__warps_active.avg.pct_of_peak_sustained_active";

// Where the regimes part (percent of the device's sustained peak). A copy kernel at HBM speed
// reads about 90% DRAM throughput; above 75% a kernel is moving bytes as fast as the device
// allows, and only moving fewer helps.
constexpr double kDramSaturated = 75.0;
constexpr double kIssueBusy = 60.0;
constexpr double kDramIdle = 50.0, kIssueIdle = 40.0;

bool identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

}  // namespace

nlohmann::json KernelCounters::to_json() const {
  nlohmann::json j = {{"dram_pct", dram_pct},
                      {"sm_pct", sm_pct},
                      {"warps_active_pct", warps_active_pct},
                      {"duration_us", duration_us},
                      {"launches", launches}};
  if (!error.empty()) j["error"] = error;
  return j;
}

KernelCounters KernelCounters::from_json(const nlohmann::json& j, const std::string& where) {
  KernelCounters c;
  if (j.is_null()) return c;
  try {
    c.dram_pct = j.at("dram_pct").get<double>();
    c.sm_pct = j.at("sm_pct").get<double>();
    c.warps_active_pct = j.at("warps_active_pct").get<double>();
    c.duration_us = j.at("duration_us").get<double>();
    c.launches = j.at("launches").get<int>();
    c.error = j.value("error", std::string());
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("{}: not a set of kernel counters ({})", where, e.what()));
  }
  return c;
}

CounterRegime counter_regime(const KernelCounters& c) {
  if (!c.measured()) return CounterRegime::kUnmeasured;
  if (c.dram_pct >= kDramSaturated) return CounterRegime::kDramSaturated;
  if (c.sm_pct >= kIssueBusy) return CounterRegime::kIssueBound;
  if (c.dram_pct < kDramIdle && c.sm_pct < kIssueIdle) return CounterRegime::kLatencyBound;
  return CounterRegime::kBetween;
}

std::string counter_regime_name(CounterRegime regime) {
  switch (regime) {
    case CounterRegime::kUnmeasured:
      return "unmeasured";
    case CounterRegime::kDramSaturated:
      return "dram-saturated";
    case CounterRegime::kIssueBound:
      return "issue-bound";
    case CounterRegime::kLatencyBound:
      return "latency-bound";
    case CounterRegime::kBetween:
      return "between";
  }
  return "unmeasured";
}

std::string counter_metrics() {
  return fmt::format("{},{},{},{}", kDuration, kDram, kSm, kWarps);
}

KernelCounters counters_from_ncu(const std::vector<core::NcuValue>& values) {
  struct Launch {
    double us = -1.0, dram = -1.0, sm = -1.0, warps = -1.0;
  };
  std::map<int, Launch> launches;
  for (const core::NcuValue& v : values) {
    Launch& l = launches[v.launch];
    if (v.metric == kDuration)
      l.us = core::ncu_microseconds(v.value, v.unit);  // unknown: -1, the launch left out
    if (v.metric == kDram) l.dram = v.value;
    if (v.metric == kSm) l.sm = v.value;
    if (v.metric == kWarps) l.warps = v.value;
  }
  KernelCounters c;
  double dram = 0.0, sm = 0.0, warps = 0.0;
  for (const auto& [id, l] : launches) {
    if (l.us <= 0.0 || l.dram < 0.0 || l.sm < 0.0 || l.warps < 0.0) continue;
    c.duration_us += l.us;
    dram += l.dram * l.us;
    sm += l.sm * l.us;
    warps += l.warps * l.us;
    ++c.launches;
  }
  if (c.launches == 0) {
    c.error = values.empty() ? "ncu reported no metrics"
                             : "no profiled launch has all of " + counter_metrics();
    return c;
  }
  c.dram_pct = dram / c.duration_us;
  c.sm_pct = sm / c.duration_us;
  c.warps_active_pct = warps / c.duration_us;
  return c;
}

std::vector<std::string> candidate_kernel_names(const std::string& source) {
  std::vector<std::string> names;
  const std::string marker = "__global__";
  for (std::size_t at = source.find(marker); at != std::string::npos;
       at = source.find(marker, at + marker.size())) {
    // The declarator: the identifier right before the first '(' that is not a
    // __launch_bounds__(...) argument list.
    std::size_t i = at + marker.size();
    std::string name;
    while (i < source.size()) {
      const std::size_t open = source.find('(', i);
      if (open == std::string::npos) break;
      std::size_t end = open;
      while (end > i && std::isspace(static_cast<unsigned char>(source[end - 1]))) --end;
      std::size_t begin = end;
      while (begin > i && identifier_char(source[begin - 1])) --begin;
      const std::string word = source.substr(begin, end - begin);
      if (word != "__launch_bounds__") {
        name = word;
        break;
      }
      int depth = 0;  // skip the bounds' parenthesised arguments
      for (i = open; i < source.size(); ++i) {
        if (source[i] == '(') ++depth;
        if (source[i] == ')' && --depth == 0) break;
      }
      ++i;
    }
    if (!name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])))
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  if (source.find("kiln-unit") != std::string::npos)
    for (const char* entry : {"device_kernel", "Kernel", "Kernel2"})
      if (std::find(names.begin(), names.end(), entry) == names.end()) names.push_back(entry);
  return names;
}

std::string candidate_kernel_filter(const std::vector<std::string>& names) {
  if (names.empty()) return "";
  std::string alternatives;
  for (const std::string& name : names) alternatives += (alternatives.empty() ? "" : "|") + name;
  // Matched against the demangled name (ncu --kernel-name-base demangled): "void name<...>(...)".
  // The candidate's kernels are at global scope, so a judge kernel of the same name inside kiln's
  // namespaces (kb1-12's reference is also row_scale) is not profiled; CUTLASS's entry points
  // live in namespace cutlass.
  return "regex:^(void )?(cutlass::)?(" + alternatives + ")(<.*>)?\\(.*$";
}

}  // namespace kiln::evolve
