// The one JSON envelope every benchmark writes: {"provenance": ..., "benchmark": <name>, then the
// benchmark's own fields (its parameters and its "rows")}. Written once here so that every result
// file carries the same provenance in the same place.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/provenance.hpp"

namespace kiln::bench {

nlohmann::json result_envelope(const core::Provenance& provenance, const std::string& benchmark,
                               const nlohmann::json& fields);

// Writes the envelope to `path` (creating its folder) and prints "# wrote <path>".
void write_result(const std::string& path, const core::Provenance& provenance,
                  const std::string& benchmark, const nlohmann::json& fields);

}  // namespace kiln::bench
