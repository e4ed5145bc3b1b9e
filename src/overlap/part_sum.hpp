// The sum of W parts: the owner's reduction of a two-phase copy-engine AllReduce (comm=ce2: the
// parts of one wave group that the ranks sent to this rank, summed into the slice this rank then
// sends back to all, on the SMs a capped GEMM leaves free while the GEMM goes on), and the
// chunked ReduceScatter's final sum (on the whole device, after its GEMMs).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/dtype.hpp"

namespace kiln::overlap {

struct PartList {
  static constexpr int kMaxParts = 8;
  int count = 0;
  const void* parts[kMaxParts] = {};
};

// out[i] = parts[0][i] + parts[1][i] + ... in fp32, in the list's order, rounded once to dtype
// (bf16 or fp16): the order and rounding of the copy-engine AllReduce's reorder, so that comm=ce2
// gives comm=ce's bits. elements % 8 == 0 and every pointer 16-byte aligned. Throws
// kiln::UsageError naming what is out of range. The grid is at most `ctas_per_sm` CTAs (of 256
// threads) per SM of `device_sms` (the caller's count: no device query per call): 2 beside a
// GEMM, kMaxCtasPerSm (a full SM's threads) where the sum has the device to itself.
inline constexpr int kMaxCtasPerSm = 8;
void sum_parts(const PartList& in, std::int64_t elements, core::DType dtype, void* out,
               int device_sms, cudaStream_t stream, int ctas_per_sm = 2);

}  // namespace kiln::overlap
