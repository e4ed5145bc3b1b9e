// Shared machinery of the single-GPU problems after KernelBench level 1 (`kb1-<id>-<slug>`,
// issue 19; specification: ScalingIntelligence/KernelBench, KernelBench/level1, commit 423217d9;
// no code taken from it). fp32 throughout, as there; tolerance atol = rtol = 1e-4 (KernelBench's
// fp32 tolerance, `get_tolerance_for_precision`).
//
// Inputs defeat sampling: every row has its own random offset and scale, and about one value in
// 4096 is a spike of 16x, so neither the mean nor any other statistic of a part predicts the
// whole (published "winning" loss kernels read a fraction of their inputs and passed on
// torch.rand's uniform values). Problems whose result is a sum also get, on one trial in three,
// {0, 1} inputs whose sums are exact in fp32: then any summation order gives the same bits and
// the comparison is exact.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/problem.hpp"
#include "core/device_buffer.hpp"

namespace kiln::problems::kb1 {

// KernelBench's fp32 tolerance.
inline constexpr double kTolerance = 1e-4;
// The whole output's relative L2 error, ||got - want|| / ||want||, at most this (10x the element
// tolerance). KernelBench's element test alone is vacuous where outputs sit below atol: softmax's
// rows of 393216 give values near 2.5e-6 and the Frobenius norm's x / ||x|| values near 2e-5, so a
// kernel off by 50% everywhere (half the row summed, the norm doubled) would pass it. Honest fp32
// kernels here are within ~1e-5.
inline constexpr double kRelativeL2Tolerance = 1e-3;

// data[r * cols + c] = offset(r) + scale(r) * u(r, c), u in [-1, 1), offset in [-lo, hi)...
// see kb1_common.cu; `positive` draws values in (0, 2 * scale] instead (logs, probabilities).
void fill_row_varied(float* data, std::int64_t rows, std::int64_t cols, std::uint64_t seed,
                     bool positive, cudaStream_t stream);
// Values in {0, 1}.
void fill_binary(float* data, std::int64_t count, std::uint64_t seed, cudaStream_t stream);
// True on the trials whose sums use exact {0, 1} inputs.
bool exact_trial(std::uint64_t seed);

struct Mismatch {
  unsigned long long count = 0;
  unsigned long long first = ~0ull;
  double got = 0.0, want = 0.0;
  double relative_l2 = 0.0;  // ||got - want|| / ||want|| over the finite elements (0: want is 0)
};
// Elements with |got - want| > atol + rtol * |want| (NaN or inf in got counts), and the whole
// output's relative L2 error. Synchronises.
Mismatch compare_floats(const float* got, const float* want, std::int64_t count, double atol,
                        double rtol, cudaStream_t stream);
Mismatch compare_int64(const std::int64_t* got, const std::int64_t* want, std::int64_t count,
                       cudaStream_t stream);
// "" or "N of M elements differ; first at i: got g, expected w (atol .., rtol ..)", or, where every
// element passes, "the output's relative L2 error r exceeds kRelativeL2Tolerance ...".
std::string describe(const Mismatch& m, std::int64_t count, double tolerance);

// Host copies of a few ranges of a device array (the start, a stretch in the middle and the
// end), for the reference's own checks on the host.
struct Sample {
  std::vector<std::int64_t> index;
  std::vector<float> value;
};
Sample sample_floats(const float* data, std::int64_t count, std::int64_t per_range);
std::vector<float> copy_floats(const float* data, std::int64_t offset, std::int64_t count);

// The sum of chunk_sum(0) .. chunk_sum(chunks - 1), the chunks taken by up to one host thread per
// core (at most 16), added in chunk order: the same double on any number of cores. For the host
// checks that recompute a whole KernelBench loss (up to 2G input elements): on one thread they
// took 3-14 s of the GPU's turn every time a judge set the problem up. chunk_sum may copy from the
// device (every thread runs on the caller's device); its first exception is rethrown here.
double sum_over_chunks(std::int64_t chunks, const std::function<double(std::int64_t)>& chunk_sum);
// work_on(0) .. work_on(chunks - 1), taken by the same threads as sum_over_chunks (in no set
// order: each chunk writes its own result slot); work_on's first exception is rethrown here.
void for_each_chunk(std::int64_t chunks, const std::function<void(std::int64_t)>& work_on);

// The `small` size of a KernelBench dimension (scripts/kb1_torch_eager.py uses the same rule,
// so PyTorch's times match kiln's rows): >= 1024 divided by 16, 256-1023 by 4, smaller kept.
inline std::int64_t small_dim(std::int64_t kb_dim) {
  return kb_dim >= 1024 ? kb_dim / 16 : (kb_dim >= 256 ? kb_dim / 4 : kb_dim);
}

// Throws kiln::UsageError naming the problem when it runs on more than one rank.
void require_one_rank(const bench::RankContext& context, const std::string& problem);

// A KernelBench size preset: "kb" (KernelBench's own) or "small" (for tests and quick runs).
bench::ProblemSize size_of(const std::string& name,
                           std::initializer_list<std::pair<const char*, std::int64_t>> dims);

}  // namespace kiln::problems::kb1
