// Driver functions through cudaGetDriverEntryPointByVersion (see driver_entry.hpp).
#include "core/driver_entry.hpp"

#include <cuda_runtime.h>

#include <string>

#include "core/cuda_check.hpp"
#include "core/error.hpp"

namespace kiln::core {

void* driver_function(const char* name) {
  void* address = nullptr;
  cudaDriverEntryPointQueryResult query = cudaDriverEntryPointSymbolNotFound;
  KILN_CUDA_CHECK(
      cudaGetDriverEntryPointByVersion(name, &address, 12000, cudaEnableDefault, &query));
  if (query != cudaDriverEntryPointSuccess || address == nullptr) {
    throw Error(std::string("the CUDA driver does not provide ") + name);
  }
  return address;
}

void check_driver(CUresult result, const char* what) {
  if (result != CUDA_SUCCESS) {
    const char* name = nullptr;
    using GetErrorName = CUresult (*)(CUresult, const char**);
    static const auto get_name = reinterpret_cast<GetErrorName>(driver_function("cuGetErrorName"));
    if (get_name(result, &name) != CUDA_SUCCESS) name = nullptr;
    throw Error(std::string(what) + " failed: " + (name ? name : "CUresult") + " (" +
                std::to_string(static_cast<int>(result)) + ")");
  }
}

}  // namespace kiln::core
