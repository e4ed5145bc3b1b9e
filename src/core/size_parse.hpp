// Byte sizes as users write them ("1M", "512K", "1G", "4096"): binary multiples, as nccl-tests.
#pragma once

#include <cstdint>
#include <string>

namespace kiln::core {

// Parses a non-negative size with an optional K/M/G/T suffix (powers of 1024) and optional 'B'.
// Throws kiln::UsageError naming `argument` when the text is not a size.
std::uint64_t parse_size(const std::string& text, const std::string& argument);

// "1 MiB", "1.5 GiB", "512 B": for headers and messages.
std::string format_size(std::uint64_t bytes);

}  // namespace kiln::core
