#include "core/error.hpp"

#include <fmt/format.h>

namespace kiln::core {

void throw_call_error(const char* library, const char* call, const char* file, int line,
                      const std::string& detail) {
  throw Error(fmt::format("{} call `{}` failed at {}:{}: {}", library, call, file, line, detail));
}

}  // namespace kiln::core
