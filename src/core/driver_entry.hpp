// CUDA driver functions reached through the runtime's entry-point query: kiln binaries must start
// on machines without libcuda (CI builds and runs them there), so nothing calls the driver library
// directly.
#pragma once

#include <cuda.h>

namespace kiln::core {

// The driver function `name` (ABI of CUDA 12.0), or a kiln::Error naming it.
void* driver_function(const char* name);

// Throws a kiln::Error naming `what` and the CUresult when `result` is not CUDA_SUCCESS.
void check_driver(CUresult result, const char* what);

}  // namespace kiln::core
