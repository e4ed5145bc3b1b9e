#include "core/dtype.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace kiln::core {

std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kBf16:
    case DType::kFp16:
      return 2;
    case DType::kFp32:
    case DType::kInt32:
      return 4;
  }
  throw Error("dtype_size: unknown dtype");
}

std::string dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kBf16:
      return "bf16";
    case DType::kFp16:
      return "fp16";
    case DType::kFp32:
      return "fp32";
    case DType::kInt32:
      return "int32";
  }
  throw Error("dtype_name: unknown dtype");
}

DType parse_dtype(const std::string& text, const std::string& argument) {
  for (DType dtype : all_dtypes()) {
    if (text == dtype_name(dtype)) return dtype;
  }
  if (text == "bfloat16") return DType::kBf16;
  if (text == "half" || text == "float16") return DType::kFp16;
  if (text == "float" || text == "float32") return DType::kFp32;
  if (text == "int") return DType::kInt32;
  throw UsageError(
      fmt::format("{}: unknown data type '{}'; accepted: bf16, fp16, fp32, int32", argument, text));
}

const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> kAll = {DType::kBf16, DType::kFp16, DType::kFp32, DType::kInt32};
  return kAll;
}

}  // namespace kiln::core
