// Making a stream wait until a wave group's counter reaches its target, without holding an SM:
// a CUDA stream memory operation (cuStreamWaitValue32, GEQ, wrap-safe) where the device supports
// it, else a one-thread spin kernel (which does occupy one SM slot while it waits).
#pragma once

#include <cuda_runtime.h>

#include <vector>

namespace kiln::overlap {

enum class WaitMethod { kStreamMemOp, kSpinKernel };
const char* wait_method_name(WaitMethod method);  // "stream-wait-value", "spin-kernel"

// Asks the driver whether cuStreamWaitValue32 works on this device and stream: one wait that is
// already satisfied (on `satisfied_word`, a device word holding 0). kSpinKernel if it reports
// CUDA_ERROR_NOT_SUPPORTED; other errors are raised.
WaitMethod detect_wait_method(cudaStream_t stream, const unsigned* satisfied_word);
// The same with a zeroed word of its own (allocated, probed and freed here; `stream` synchronised),
// for objects that hold no such word, and `force_spin` (a test or --spin-wait) taking kSpinKernel.
WaitMethod choose_wait_method(cudaStream_t stream, bool force_spin = false);

// Seconds a spin-kernel wait lasts before it traps (a stream memory wait has no bound on the GPU:
// GemmCollective::wait bounds it from the host).
inline constexpr double kDefaultCounterWaitSeconds = 120.0;

// Enqueues on `stream`: wait until (int32)(*counter - target) >= 0. The spin kernel prints
// `label`, the counter and the target and traps after `timeout_seconds`.
void enqueue_counter_wait(WaitMethod method, const unsigned* counter, unsigned target,
                          cudaStream_t stream, double timeout_seconds = kDefaultCounterWaitSeconds,
                          int label = -1);

// The host side of a wait that timed out: reads the device words words[0..n) on a stream of its
// own (the waiting streams are blocked) and raises each word still behind its target
// ((int32)(word - target) < 0) to the target, one word at a time, since the others may be written
// meanwhile. Returns the values read, for the caller's report.
std::vector<unsigned> raise_words_behind(unsigned* words, const std::vector<unsigned>& targets);

// Enqueues on `stream`: *word = value (cuStreamWriteValue32, no SM), ordered after the stream's
// earlier work with the driver's default memory barrier. `word` is this device's memory.
void enqueue_value_write(unsigned* word, unsigned value, cudaStream_t stream);

}  // namespace kiln::overlap
