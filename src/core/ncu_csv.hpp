// The parse of Nsight Compute's `--csv` output (its default "details" page: one line per metric
// per profiled launch, with "ID", "Kernel Name", "Metric Name", "Metric Unit" and "Metric Value"
// columns). Shared by `kiln reduce bench --ncu` and `kiln evolve --ncu`. Host-only, tested on CPU.
#pragma once

#include <string>
#include <vector>

namespace kiln::core {

struct NcuValue {
  std::string metric, unit;
  double value = 0.0;
  int launch = -1;     // the "ID" column: which profiled launch (-1 where there is none)
  std::string kernel;  // the "Kernel Name" column ("" where there is none)
};

// Every numeric metric value in `csv`, in order (thousands separators dropped); lines before the
// header (ncu's ==PROF== notes, the program's own output) and values that are not numbers are
// skipped. Empty when the output holds no metrics.
std::vector<NcuValue> parse_ncu_csv(const std::string& csv);

// A gpu__time_duration value in microseconds from ncu's unit (ns, us, ms, s in either
// spelling); -1 for a unit not known here.
double ncu_microseconds(double value, const std::string& unit);

// ncu's first ==ERROR== line in `output` (e.g. ERR_NVGPUCTRPERM), or "" when there is none.
std::string ncu_error_line(const std::string& output);

}  // namespace kiln::core
