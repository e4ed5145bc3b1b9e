// Hardware counters of a judged kernel (Nsight Compute) for the search's roofline guidance with
// `kiln evolve --ncu` (issue 20: "roofline-guided operator weights ... with --ncu metrics when
// asked"). The model alone says which roof binds and how far below it a kernel runs; the counters
// say why: a kernel already moving bytes at the DRAM ceiling can only get faster by moving fewer
// (on-chip reuse, L2), one that keeps the SMs' issue busy needs fewer instructions, and one where
// both are low is waiting on latency (more bytes or warps in flight). Host-only, tested on CPU.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/ncu_csv.hpp"

namespace kiln::evolve {

struct KernelCounters {
  // Duration-weighted over the candidate's profiled launches; -1: not measured.
  double dram_pct = -1.0;          // dram__throughput.avg.pct_of_peak_sustained_elapsed
  double sm_pct = -1.0;            // sm__throughput.avg.pct_of_peak_sustained_elapsed
  double warps_active_pct = -1.0;  // sm__warps_active.avg.pct_of_peak_sustained_active
  double duration_us = 0.0;        // gpu__time_duration.sum, summed
  int launches = 0;
  std::string error;  // why there are no counters (ncu missing, refused, nothing profiled)
  bool measured() const { return launches > 0 && dram_pct >= 0.0 && sm_pct >= 0.0; }
  nlohmann::json to_json() const;
  // Absent or null: not measured. Throws kiln::UsageError naming `where` on a malformed object.
  static KernelCounters from_json(const nlohmann::json& j, const std::string& where);
};

// What the counters say limits the kernel (KernelCounters' comment).
enum class CounterRegime { kUnmeasured, kDramSaturated, kIssueBound, kLatencyBound, kBetween };
CounterRegime counter_regime(const KernelCounters& counters);
std::string counter_regime_name(CounterRegime regime);  // "dram-saturated", ...

// The metrics asked of ncu (comma-separated for --metrics).
std::string counter_metrics();
// Counters from ncu's parsed CSV: each launch's values grouped by its ID, the percentages
// weighted by the launches' durations. `error` set when no launch has every metric.
KernelCounters counters_from_ncu(const std::vector<core::NcuValue>& values);

// The __global__ functions `source` defines, by name, in order: what ncu is told to profile
// (the judge's own kernels, fills and references, must not be). A source built on kiln-unit
// CUTLASS code adds CUTLASS's kernel entry points (device_kernel, Kernel, Kernel2).
std::vector<std::string> candidate_kernel_names(const std::string& source);
// ncu's --kernel-name argument for those names, matched against demangled names (ncu
// --kernel-name-base demangled): those functions at global scope (CUTLASS's in namespace cutlass),
// any template arguments; "" when there are none.
std::string candidate_kernel_filter(const std::vector<std::string>& names);

}  // namespace kiln::evolve
