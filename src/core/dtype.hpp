// Element types kiln moves and reduces, with their names and sizes.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace kiln::core {

enum class DType { kBf16, kFp16, kFp32, kInt32 };

std::size_t dtype_size(DType dtype);
std::string dtype_name(DType dtype);  // "bf16", "fp16", "fp32", "int32"
// Throws kiln::UsageError naming `argument` and the accepted names.
DType parse_dtype(const std::string& text, const std::string& argument);
const std::vector<DType>& all_dtypes();

}  // namespace kiln::core
