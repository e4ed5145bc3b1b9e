// The result envelope (see result_envelope.hpp).
#include "bench/result_envelope.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

#include "core/error.hpp"

namespace kiln::bench {

nlohmann::json result_envelope(const core::Provenance& provenance, const std::string& benchmark,
                               const nlohmann::json& fields) {
  if (!fields.is_object()) throw Error("result envelope: the fields must be a JSON object");
  nlohmann::json result = fields;
  result["provenance"] = core::to_json(provenance);
  result["benchmark"] = benchmark;
  return result;
}

void write_result(const std::string& path, const core::Provenance& provenance,
                  const std::string& benchmark, const nlohmann::json& fields) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  core::write_json_file(path, result_envelope(provenance, benchmark, fields));
  fmt::print("# wrote {}\n", path);
  std::fflush(stdout);
}

}  // namespace kiln::bench
