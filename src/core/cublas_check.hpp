// KILN_CUBLAS_CHECK: check a cuBLAS / cuBLASLt return code.
#pragma once

#include <cublas_v2.h>

#include <string>

#include "core/error.hpp"

#define KILN_CUBLAS_CHECK(call)                                                              \
  do {                                                                                       \
    const cublasStatus_t kiln_status_ = (call);                                              \
    if (kiln_status_ != CUBLAS_STATUS_SUCCESS)                                               \
      ::kiln::core::throw_call_error("cuBLAS", #call, __FILE__, __LINE__,                    \
                                     std::string(cublasGetStatusName(kiln_status_)) + " (" + \
                                         cublasGetStatusString(kiln_status_) + ")");         \
  } while (0)
