// A one-shot all-reduce with the arrival flag in the data (the "Lamport" scheme of TensorRT-LLM's
// low-latency all-reduce; the code is kiln's): every rank pushes its vector into a slot of every
// rank's receive buffer, which holds a sentinel (the bits of -0.0) wherever no data has arrived;
// each rank polls its own slots until no element is the sentinel and sums them in rank order.
// No barrier and no read across NVLink: one remote write and a local poll, against the pull
// kernels' flag round trip plus read round trip. Writers turn -0.0 into +0.0 (the sum changes only
// in the sign of a zero). bf16 and fp16 only (16-bit sentinel).
//
// Buffers in turn (three): call k uses buffer k % 3, and each thread empties the slots it has just
// summed. The next write into them is call k + 3's, which a peer makes only after it has seen this
// rank's push of call k + 2, which this rank makes after this kernel ended; so a buffer is empty
// whenever it is written, whatever the sizes of the calls. Every rank must make the same sequence
// of calls, with grids that keep every block resident (one per SM at most: a block waits for
// peers' blocks).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "core/dtype.hpp"

namespace kiln::comm {

struct LamportArgs {
  static constexpr int kMaxWorld = 8;
  char* slots[kMaxWorld];  // every rank's receive buffers as mapped here: [3][world][capacity]
  char* my_slots;          // this rank's (the same as slots[rank])
  const char* input;       // this rank's vector
  char* out;
  std::size_t capacity;  // bytes per slot
  std::size_t vectors;   // 16-byte vectors of this call
  int buffer;            // this call's buffer index (0..kBuffers-1)
  int rank, world;
  static constexpr int kBuffers = 3;
};

// The 32-bit word a buffer is filled with while empty: the 16-bit sentinel twice.
constexpr unsigned kLamportEmptyWord = 0x80008000u;

// Enqueues the all-reduce (sum) on `stream`: `blocks` blocks of 512 threads.
void launch_lamport_all_reduce(const LamportArgs& args, core::DType dtype, int blocks,
                               cudaStream_t stream);
// Fills `bytes` (a multiple of 4) at `buffer` with kLamportEmptyWord.
void fill_lamport_empty(void* buffer, std::size_t bytes, cudaStream_t stream);

}  // namespace kiln::comm
