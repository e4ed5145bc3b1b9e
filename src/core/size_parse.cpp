#include "core/size_parse.hpp"

#include <fmt/format.h>

#include <cctype>
#include <limits>

#include "core/error.hpp"

namespace kiln::core {

std::uint64_t parse_size(const std::string& text, const std::string& argument) {
  const auto bad = [&]() {
    return UsageError(fmt::format(
        "{}: '{}' is not a size; expected a whole number with an optional K, M, G or T suffix "
        "(binary multiples), e.g. 1M",
        argument, text));
  };
  std::size_t pos = 0;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
  if (pos == 0 || pos > 19) throw bad();
  const std::uint64_t number = std::stoull(text.substr(0, pos));
  std::string suffix = text.substr(pos);
  if (!suffix.empty() && (suffix.back() == 'B' || suffix.back() == 'b')) suffix.pop_back();
  if (suffix.size() > 1) throw bad();
  int shift = 0;
  if (suffix.size() == 1) {
    switch (std::toupper(static_cast<unsigned char>(suffix[0]))) {
      case 'K':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
      case 'T':
        shift = 40;
        break;
      default:
        throw bad();
    }
  }
  if (shift > 0 && number > (std::numeric_limits<std::uint64_t>::max() >> shift)) throw bad();
  return number << shift;
}

std::string format_size(std::uint64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  double value = static_cast<double>(bytes);
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  if (unit == 0) return fmt::format("{} B", bytes);
  if (value == static_cast<double>(static_cast<std::uint64_t>(value))) {
    return fmt::format("{} {}", static_cast<std::uint64_t>(value), kUnits[unit]);
  }
  return fmt::format("{:.2f} {}", value, kUnits[unit]);
}

}  // namespace kiln::core
