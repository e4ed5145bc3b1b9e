// PyTorch eager's times for the suite's rows, from the JSON that scripts/kb1_torch_eager.py
// writes on the same device in the same call (the baseline KernelBench users compare against).
#pragma once

#include <map>
#include <string>

namespace kiln::bench {

// "problem size" -> median microseconds. Throws kiln::UsageError naming the file and the field
// when it cannot be read; rows with an "error" (the problem failed in PyTorch) are left out.
std::map<std::string, double> load_torch_baseline(const std::string& path);

inline std::string torch_baseline_key(const std::string& problem, const std::string& size) {
  return problem + " " + size;
}

}  // namespace kiln::bench
