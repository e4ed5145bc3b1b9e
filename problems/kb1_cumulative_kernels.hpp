// Kernels of the cumulative kb1 problems (89-93): a scan along every row of a row-major
// (rows, cols) fp32 tensor. The masked scan's mask holds one byte per element, 0 or 1, as
// torch.bool stores it.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace kiln::problems::kb1 {

enum class ScanOp {
  kCumsum,           // 89: y[j] = x[0] + ... + x[j]
  kCumprod,          // 90: y[j] = x[0] * ... * x[j]
  kCumsumReverse,    // 91: y[j] = x[j] + ... + x[cols - 1] (flip, cumsum, flip)
  kCumsumExclusive,  // 92: y[0] = 0, y[j] = x[0] + ... + x[j - 1] (x's last column unused)
  kMaskedCumsum,     // 93: y[j] = x[0] * m[0] + ... + x[j] * m[j]
};

// True for the scans that add (every one but cumprod).
inline bool scan_sums(ScanOp op) {
  return op != ScanOp::kCumprod;
}

// mask[i] in {0, 1}: one random bit of (seed, i) per byte.
void fill_mask(std::uint8_t* mask, std::int64_t count, std::uint64_t seed, cudaStream_t stream);

// `mask` is read by kMaskedCumsum only (null for the others).
// Reference: one thread per row, walking it in order (backwards for the reverse scan); sums in
// double, rounded once per output; cumprod multiplies in fp32 in order, as a plain fp32 scan
// does (so a running product that underflows to 0 stays 0, one that overflows stays inf).
void launch_scan_reference(ScanOp op, const float* x, const std::uint8_t* mask, float* y,
                           std::int64_t rows, std::int64_t cols, cudaStream_t stream);
// kiln: a block of 256 threads per row, walking it in chunks of 4096 elements with a running
// carry (fp32 throughout, deterministic): each thread scans its 16-byte vectors, the warps scan
// the vector totals with shuffles, and every thread combines the warp totals of the chunk (one
// barrier per chunk: the totals are double-buffered). Loads and stores are 16 bytes, coalesced
// (the reverse scan walks the vectors from the row's end); rows whose length is not a multiple
// of 4, or misaligned buffers, take the same kernel with scalar elements.
void launch_scan_kiln(ScanOp op, const float* x, const std::uint8_t* mask, float* y,
                      std::int64_t rows, std::int64_t cols, cudaStream_t stream);

}  // namespace kiln::problems::kb1
