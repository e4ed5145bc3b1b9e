// A candidate source may mark one region as a separate compilation unit:
//   // kiln-unit: begin
//   ...  (code that depends on nothing else in the file)
//   // kiln-unit: end
// compile_candidate then builds that region into an object of its own, kept by its code and
// flags (so candidates that share it, such as the evolution engine's generated matmuls of one
// CUTLASS configuration, compile it once), and links it with the rest. The file stays one valid
// translation unit: nvcc compiles it whole just the same (`kiln evolve export`'s build line).
#pragma once

#include <optional>
#include <string>

namespace kiln::bench {

struct SplitCandidateSource {
  std::string unit;  // the marked region, markers included
  std::string rest;  // the source with the region's lines emptied (line numbers kept)
};

// Whether `line` holds only the marker comment `marker` (leading and trailing blanks aside): the
// one test of a marker line, shared by the split build's markers (split_build.hpp).
bool is_marker_line(const std::string& line, const std::string& marker);

// The two parts, or nullopt when the source has no marked region. Throws kiln::UsageError naming
// `source_name` for a begin without an end, an end without a begin, or a second region.
std::optional<SplitCandidateSource> split_candidate_unit(const std::string& content,
                                                         const std::string& source_name);

}  // namespace kiln::bench
