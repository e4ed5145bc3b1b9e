// Kernels of the loss kb1 problems: cross entropy (95), Huber (96), KL divergence (98), triplet
// margin (99) and hinge (100), each a scalar from fp32 inputs (95's targets are int64), and the
// input generators they need beyond kb1_common.hpp.
//
// Every loss writes one float. `partials` holds at least loss_partials(rows) doubles (shared by
// the reference and the solution, which run one after the other on one stream).
// Reference: a block per row, sums in double, one double per row, then one thread adds the rows
// in order. kiln: 16-byte loads where rows allow (4 | cols), fp32 per thread, a fixed grid, block
// partials in double, one final block (deterministic: no float atomics).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace kiln::problems::kb1 {

// PyTorch's defaults: smooth_l1_loss's beta, TripletMarginLoss's margin and pairwise_distance's
// eps (added to the difference before the norm: ||a - p + eps||_2).
inline constexpr double kHuberBeta = 1.0;
inline constexpr double kTripletMargin = 1.0;
inline constexpr double kTripletEps = 1e-6;

std::int64_t loss_partials(std::int64_t rows);

// Input generators. data[i] = a uniform class in [0, classes) (int64).
void fill_classes(std::int64_t* data, std::int64_t count, std::int64_t classes, std::uint64_t seed,
                  cudaStream_t stream);
// data[i] in {-1, +1} (fp32).
void fill_signs(float* data, std::int64_t count, std::uint64_t seed, cudaStream_t stream);
// Every row of `rows` x `cols` replaced by its softmax (fp32; positive for finite inputs).
void softmax_rows_in_place(float* data, std::int64_t rows, std::int64_t cols, cudaStream_t stream);

// cross_entropy(logits, targets): mean over rows of logsumexp(row) - row[target].
void launch_cross_entropy_reference(const float* logits, const std::int64_t* targets, float* out,
                                    double* partials, std::int64_t rows, std::int64_t classes,
                                    cudaStream_t stream);
// kiln: a warp per row, an online (max, sum of exp) per lane.
void launch_cross_entropy_kiln(const float* logits, const std::int64_t* targets, float* out,
                               double* partials, std::int64_t rows, std::int64_t classes,
                               cudaStream_t stream);

// smooth_l1_loss(p, t), beta 1, mean over every element.
void launch_huber_reference(const float* p, const float* t, float* out, double* partials,
                            std::int64_t rows, std::int64_t cols, cudaStream_t stream);
// kiln: the elements as one flat array.
void launch_huber_kiln(const float* p, const float* t, float* out, double* partials,
                       std::int64_t rows, std::int64_t cols, cudaStream_t stream);

// kl_div(log(p), t, reduction='batchmean'): sum of t * (log t - log p) over every element, over
// the rows; t = 0 contributes 0 (xlogy).
void launch_kl_div_reference(const float* p, const float* t, float* out, double* partials,
                             std::int64_t rows, std::int64_t cols, cudaStream_t stream);
// kiln: the elements as one flat array, t * log(t / p) (one logarithm per element).
void launch_kl_div_kiln(const float* p, const float* t, float* out, double* partials,
                        std::int64_t rows, std::int64_t cols, cudaStream_t stream);

// TripletMarginLoss(margin 1, p 2, eps 1e-6): mean over rows of
// max(||a - p + eps|| - ||a - n + eps|| + margin, 0).
void launch_triplet_reference(const float* anchor, const float* positive, const float* negative,
                              float* out, double* partials, std::int64_t rows, std::int64_t cols,
                              cudaStream_t stream);
// kiln: a warp per row, both sums of squares in one pass.
void launch_triplet_kiln(const float* anchor, const float* positive, const float* negative,
                         float* out, double* partials, std::int64_t rows, std::int64_t cols,
                         cudaStream_t stream);

// mean(clamp(1 - p * t, min=0)), p of rows x cols, t of cols values broadcast over the rows
// (element (r, c) uses t[c]).
void launch_hinge_reference(const float* p, const float* t, float* out, double* partials,
                            std::int64_t rows, std::int64_t cols, cudaStream_t stream);
// kiln: column tiles with their targets in registers, row groups over the blocks, 16-byte loads.
void launch_hinge_kiln(const float* p, const float* t, float* out, double* partials,
                       std::int64_t rows, std::int64_t cols, cudaStream_t stream);

}  // namespace kiln::problems::kb1
