// KILN_NCCL_CHECK: check an NCCL return code. For calls on a non-blocking communicator, use
// Communicator::complete instead (it also waits out ncclInProgress under the watchdog).
#pragma once

#include <nccl.h>

#include <string>

#include "core/error.hpp"

namespace kiln::comm {
inline std::string nccl_error_detail(ncclResult_t status) {
  std::string detail = ncclGetErrorString(status);
  const char* last = ncclGetLastError(nullptr);
  if (last != nullptr && *last != '\0') detail += std::string(": ") + last;
  return detail;
}
}  // namespace kiln::comm

#define KILN_NCCL_CHECK(call)                                                        \
  do {                                                                               \
    const ncclResult_t kiln_status_ = (call);                                        \
    if (kiln_status_ != ncclSuccess)                                                 \
      ::kiln::core::throw_call_error("NCCL", #call, __FILE__, __LINE__,              \
                                     ::kiln::comm::nccl_error_detail(kiln_status_)); \
  } while (0)
