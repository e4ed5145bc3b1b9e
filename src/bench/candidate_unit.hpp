// A candidate source may mark regions as separate compilation units:
//   // kiln-unit: begin
//   ...  (code that depends on nothing else in the file)
//   // kiln-unit: end
// compile_candidate then builds each region into an object of its own, kept by its code and
// flags (so candidates that share it, such as the evolution engine's generated matmuls of one
// CUTLASS configuration, compile it once), and links them with the rest. Several regions let a
// candidate be made of other candidates' units (the attention family's two GEMMs are the matmul
// family's units). The file stays one valid translation unit: nvcc compiles it whole just the
// same (`kiln evolve export`'s build line), so the regions' names must not collide.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kiln::bench {

struct SplitCandidateSource {
  std::vector<std::string> units;  // the marked regions in order, markers included
  std::string rest;                // the source with the regions' lines emptied (line numbers kept)
};

// Whether `line` holds only the marker comment `marker` (leading and trailing blanks aside): the
// one test of a marker line, shared by the split build's markers (split_build.hpp).
bool is_marker_line(const std::string& line, const std::string& marker);

// The parts, or nullopt when the source has no marked region. Throws kiln::UsageError naming
// `source_name` for a begin without an end, an end without a begin, or a begin inside a region.
std::optional<SplitCandidateSource> split_candidate_unit(const std::string& content,
                                                         const std::string& source_name);

}  // namespace kiln::bench
