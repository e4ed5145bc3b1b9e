#include "core/provenance.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/cuda_check.hpp"
#include "core/error.hpp"

extern "C" const char* kiln_build_git_commit();  // generated at build time (cmake/git_commit.cmake)

namespace kiln::core {
namespace {

// The kernel module's version line holds the driver release ("... Kernel Module  580.159.04 ...").
std::string read_driver_release() {
  std::ifstream file("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(file, line)) return "";
  std::istringstream words(line);
  std::string word;
  while (words >> word) {
    if (std::count(word.begin(), word.end(), '.') >= 1 && std::isdigit(word[0]) &&
        word.find_first_not_of("0123456789.") == std::string::npos) {
      return word;
    }
  }
  return "";
}

std::string version_text(int version) {  // 13000 -> "13.0"
  return fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
}

}  // namespace

std::string git_commit() {
  return kiln_build_git_commit();
}

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

Provenance host_provenance(int argc, char** argv) {
  Provenance provenance;
  for (int i = 0; i < argc; ++i) {
    if (i > 0) provenance.command_line += ' ';
    provenance.command_line += argv[i];
  }
  provenance.git_commit = git_commit();
  provenance.date_utc = utc_now_iso8601();
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0) provenance.hostname = host;
  return provenance;
}

void add_device_provenance(Provenance& provenance, int device) {
  cudaDeviceProp properties{};
  KILN_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  provenance.devices.push_back(properties.name);
  int driver = 0;
  int runtime = 0;
  KILN_CUDA_CHECK(cudaDriverGetVersion(&driver));
  KILN_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  const std::string release = read_driver_release();
  provenance.driver_version = release.empty() ? "CUDA " + version_text(driver)
                                              : release + " (CUDA " + version_text(driver) + ")";
  provenance.cuda_runtime_version = version_text(runtime);
}

void add_current_device_provenance(Provenance& provenance) {
  int device = 0;
  KILN_CUDA_CHECK(cudaGetDevice(&device));
  add_device_provenance(provenance, device);
}

nlohmann::json to_json(const Provenance& provenance) {
  nlohmann::json value;
  value["command"] = provenance.command_line;
  value["commit"] = provenance.git_commit;
  value["date"] = provenance.date_utc;
  value["host"] = provenance.hostname;
  value["world_size"] = provenance.world_size;
  value["ranks_per_gpu"] = provenance.ranks_per_gpu;
  value["timings_meaningful"] = provenance.ranks_per_gpu <= 1;
  value["devices"] = provenance.devices;
  value["driver"] = provenance.driver_version;
  value["cuda_runtime"] = provenance.cuda_runtime_version;
  value["libraries"] = provenance.libraries;
  return value;
}

void write_json_file(const std::string& path, const nlohmann::json& value) {
  const auto write = [&](const std::string& to) {
    std::ofstream file(to);
    if (!file) throw Error(fmt::format("cannot open '{}' for writing", to));
    file << value.dump(2) << '\n';
    if (!file) throw Error(fmt::format("writing '{}' failed", to));
  };
  // A device or pipe (--json /dev/stdout) is written as it is: it cannot be renamed onto.
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    write(path);
    return;
  }
  // Through a file beside it and a rename: a reader, or a kill mid-write, never meets half a file
  // (the suite rewrites its JSON after every row, a judge's parent adds its verdict afterwards).
  const std::string partial = path + ".partial";
  write(partial);
  std::filesystem::rename(partial, path, error);
  if (error) {
    throw Error(fmt::format("cannot rename '{}' to '{}': {}", partial, path, error.message()));
  }
}

}  // namespace kiln::core
