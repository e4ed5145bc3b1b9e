// Reads PyTorch eager's times (see torch_baseline.hpp).
#include "bench/torch_baseline.hpp"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace kiln::bench {

std::map<std::string, double> load_torch_baseline(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw UsageError(fmt::format("--torch-json {}: cannot open the file", path));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(file);
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("--torch-json {}: not JSON ({})", path, e.what()));
  }
  if (!j.contains("rows") || !j["rows"].is_array())
    throw UsageError(fmt::format("--torch-json {}: no \"rows\" array", path));
  std::map<std::string, double> times;
  for (const auto& row : j["rows"]) {
    if (row.contains("error")) continue;
    try {
      const double median = row.at("torch_us").at("median").get<double>();
      times[torch_baseline_key(row.at("problem").get<std::string>(),
                               row.at("size").get<std::string>())] = median;
    } catch (const nlohmann::json::exception& e) {
      throw UsageError(fmt::format(
          "--torch-json {}: a row lacks problem, size or torch_us.median ({})", path, e.what()));
    }
  }
  return times;
}

}  // namespace kiln::bench
