// Provenance attached to every JSON result: enough to reproduce the figure and to know where it
// came from (command, commit, device, driver, CUDA and library versions, world size, date).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kiln::core {

struct Provenance {
  std::string command_line;
  std::string git_commit;
  std::string date_utc;  // ISO 8601
  std::string hostname;
  int world_size = 1;
  int ranks_per_gpu = 1;             // above 1 the ranks shared GPUs: timings are not meaningful
  std::vector<std::string> devices;  // one entry per rank or per GPU used
  std::string driver_version;        // e.g. "580.159.04", or the CUDA driver API version
  std::string cuda_runtime_version;  // e.g. "13.0"
  std::map<std::string, std::string> libraries;  // "nccl" -> "2.28.9", "cublas" -> ...
};

// Host facts only; touches no CUDA API (safe before fork).
Provenance host_provenance(int argc, char** argv);
// Adds the current device's name plus driver and runtime versions.
void add_device_provenance(Provenance& provenance, int device);
// The same for the calling thread's current device.
void add_current_device_provenance(Provenance& provenance);

std::string git_commit();  // the commit the binary was built from, "-dirty" when it had changes
std::string utc_now_iso8601();

nlohmann::json to_json(const Provenance& provenance);

// Writes `value` to `path` (pretty-printed) through `path`.partial and a rename, so that no reader
// meets half a file; throws kiln::Error naming the path on failure.
void write_json_file(const std::string& path, const nlohmann::json& value);

}  // namespace kiln::core
