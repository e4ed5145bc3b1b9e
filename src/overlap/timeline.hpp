// Device timestamps for the overlap timeline: %globaltimer written by a one-thread kernel on a
// stream, comparable with the per-slot times the signaling epilogue records in trace mode.
#pragma once

#include <cuda_runtime.h>

namespace kiln::overlap {

// Enqueues: *where = %globaltimer (ns) when the stream reaches this point.
void enqueue_timestamp(unsigned long long* where, cudaStream_t stream);

}  // namespace kiln::overlap
