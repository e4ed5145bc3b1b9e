// Excerpts of judge and compiler output (see judge_output.hpp).
#include "evolve/judge_output.hpp"

#include <cctype>

namespace kiln::evolve {

std::string error_excerpt(const std::string& text) {
  const std::size_t at = text.find("error");
  return text.substr(at == std::string::npos ? 0 : at, 300);
}

std::string last_error_line(const std::string& text) {
  std::string last, last_error;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string lower = line;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.find("error") != std::string::npos || lower.find("killed") != std::string::npos ||
        lower.find("signal") != std::string::npos)
      last_error = line;
    last = line;
  }
  return (last_error.empty() ? last : last_error).substr(0, 300);
}

bool judged_nothing(const std::string& failure) {
  return failure.rfind("the ranks ended without a report", 0) == 0 ||
         failure.rfind("no result (exit ", 0) == 0;
}

}  // namespace kiln::evolve
