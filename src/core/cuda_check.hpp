// KILN_CUDA_CHECK / KILN_CU_CHECK: check a CUDA runtime / driver API return code.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <string>

#include "core/error.hpp"

namespace kiln::core {

inline std::string cuda_error_detail(cudaError_t status) {
  return std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ")";
}

inline std::string cu_error_detail(CUresult status) {
  const char* name = nullptr;
  const char* text = nullptr;
  cuGetErrorName(status, &name);
  cuGetErrorString(status, &text);
  return std::string(name ? name : "CUDA_ERROR_UNKNOWN") + " (" + (text ? text : "?") + ")";
}

}  // namespace kiln::core

#define KILN_CUDA_CHECK(call)                                                        \
  do {                                                                               \
    const cudaError_t kiln_status_ = (call);                                         \
    if (kiln_status_ != cudaSuccess)                                                 \
      ::kiln::core::throw_call_error("CUDA", #call, __FILE__, __LINE__,              \
                                     ::kiln::core::cuda_error_detail(kiln_status_)); \
  } while (0)

// After a kernel launch: reports launch-configuration errors at the launch site.
#define KILN_CUDA_CHECK_LAUNCH() KILN_CUDA_CHECK(cudaGetLastError())

#define KILN_CU_CHECK(call)                                                        \
  do {                                                                             \
    const CUresult kiln_status_ = (call);                                          \
    if (kiln_status_ != CUDA_SUCCESS)                                              \
      ::kiln::core::throw_call_error("CUDA driver", #call, __FILE__, __LINE__,     \
                                     ::kiln::core::cu_error_detail(kiln_status_)); \
  } while (0)
