// A kernel that only waits: for tests that make one rank or one stream late on purpose.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace kiln::core {

// Enqueues on `stream` one single-thread kernel that returns `nanoseconds` after it starts
// (%globaltimer); 0 enqueues nothing.
void enqueue_sleep(std::uint64_t nanoseconds, cudaStream_t stream);

}  // namespace kiln::core
