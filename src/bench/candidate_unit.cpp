// Splitting a candidate source at its kiln-unit markers (see candidate_unit.hpp).
#include "bench/candidate_unit.hpp"

#include "core/error.hpp"

namespace kiln::bench {

bool is_marker_line(const std::string& line, const std::string& marker) {
  const std::size_t first = line.find_first_not_of(" \t");
  if (first == std::string::npos) return false;
  const std::size_t last = line.find_last_not_of(" \t\r");
  return line.compare(first, last + 1 - first, marker) == 0;
}

std::optional<SplitCandidateSource> split_candidate_unit(const std::string& content,
                                                         const std::string& source_name) {
  static const std::string kBegin = "// kiln-unit: begin";
  static const std::string kEnd = "// kiln-unit: end";
  SplitCandidateSource split;
  enum { kOutside, kInside } state = kOutside;
  bool any = false;
  std::size_t start = 0;
  while (start < content.size()) {
    std::size_t end = content.find('\n', start);
    const bool newline = end != std::string::npos;
    if (!newline) end = content.size();
    const std::string line = content.substr(start, end - start);
    const bool begin = is_marker_line(line, kBegin), finish = is_marker_line(line, kEnd);
    if (begin && state == kInside)
      throw UsageError(source_name + ": `" + kBegin + "` inside a unit (each unit is closed by `" +
                       kEnd + "` before the next begins)");
    if (finish && state != kInside)
      throw UsageError(source_name + ": `" + kEnd + "` without a `" + kBegin + "` before it");
    if (begin) {
      state = kInside;
      any = true;
      split.units.emplace_back();
    }
    const bool in_unit = state == kInside;
    if (finish) state = kOutside;
    if (in_unit) split.units.back() += line + (newline ? "\n" : "");
    split.rest += in_unit ? (newline ? "\n" : "") : line + (newline ? "\n" : "");
    start = end + 1;
  }
  if (!any) return std::nullopt;
  if (state == kInside)
    throw UsageError(source_name + ": `" + kBegin + "` without a `" + kEnd + "` after it");
  return split;
}

}  // namespace kiln::bench
