// kiln::Error and the check macros: every failing call is reported with the call's text, its
// file:line and the library's own message, so a user can tell what failed without a debugger.
#pragma once

#include <stdexcept>
#include <string>

namespace kiln {

// Raised at API boundaries. `what()` is one human-readable line.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// A mistake in what the user asked for (a flag out of range, an unknown name). The CLI turns it
// into one line and exit code 2, as command-line tools do for usage errors.
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& message) : Error(message) {}
};

// A collective or other bounded wait that did not finish in time.
class TimeoutError : public Error {
 public:
  explicit TimeoutError(const std::string& message) : Error(message) {}
};

namespace core {
// Formats "<call> failed at <file>:<line>: <detail>" and throws kiln::Error.
[[noreturn]] void throw_call_error(const char* library, const char* call, const char* file,
                                   int line, const std::string& detail);
}  // namespace core

}  // namespace kiln

// Checks a condition on user input or API arguments; throws kiln::UsageError with the message.
#define KILN_REQUIRE(condition, message)                 \
  do {                                                   \
    if (!(condition)) throw ::kiln::UsageError(message); \
  } while (0)
