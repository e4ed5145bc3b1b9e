// Kernels of the normalisation kb1 problems (softmax 23-24, the norms 33-40): statistics over
// segments of a tensor, then every element mapped with its segment's statistics. fp32 in and
// out.
//
// The tensor is viewed as [P][Q][R] (element (p, q, r) at (p * Q + q) * R + r). A segment is
//  - kMiddle: every q of one (p, r) (softmax and row norms: R = 1; RMSNorm over channels: R = H*W);
//  - kOuter: every (p, r) of one q (BatchNorm: the statistics of a channel over batch and space).
// Statistics are gathered in chunks of a segment (many blocks per long segment), then the
// chunks are combined in order per segment (deterministic), then the map.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/test_values.hpp"  // KILN_HOST_DEVICE

namespace kiln::problems::kb1 {

enum class NormOp {
  kSoftmax,
  kLogSoftmax,
  kL1,           // x / mean(|x|)
  kL2,           // x / sqrt(sum x^2) (also the Frobenius norm: one segment)
  kRms,          // x / sqrt(mean x^2 + eps)
  kStandardize,  // (x - mean) / sqrt(biased var + eps): Layer/Instance/Group/BatchNorm, weight 1
                 // bias 0
};
enum class SegmentAxes { kMiddle, kOuter };

struct NormShape {
  std::int64_t p = 1, q = 1, r = 1;
  SegmentAxes axes = SegmentAxes::kMiddle;
  double eps = 1e-5;
  KILN_HOST_DEVICE std::int64_t segments() const {
    return axes == SegmentAxes::kMiddle ? p * r : q;
  }
  KILN_HOST_DEVICE std::int64_t segment_length() const {
    return axes == SegmentAxes::kMiddle ? q : p * r;
  }
  // The offset of element j of segment s.
  KILN_HOST_DEVICE std::int64_t offset(std::int64_t s, std::int64_t j) const {
    if (axes == SegmentAxes::kMiddle) return ((s / r) * q + j) * r + s % r;
    return ((j / r) * q + s) * r + j % r;
  }
};

// Scratch doubles the statistics need (chunk partials and per-segment results).
std::int64_t norm_scratch_doubles(const NormShape& shape, bool kiln);

// Reference: chunks of 64 Ki elements, sums in double; one thread per output element.
void launch_norm_reference(NormOp op, const NormShape& shape, const float* x, float* y,
                           double* scratch, cudaStream_t stream);
// kiln: chunks sized to the GPU, fp32 per thread and double across threads; the map reads
// the segment's two factors once per thread and walks 4 elements at a time where rows allow.
void launch_norm_kiln(NormOp op, const NormShape& shape, const float* x, float* y, double* scratch,
                      cudaStream_t stream);

}  // namespace kiln::problems::kb1
