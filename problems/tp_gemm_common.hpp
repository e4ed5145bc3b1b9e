// Shared by the tensor-parallel GEMM problems (tp-gemm-allreduce, tp-gemm-reducescatter,
// tp-allgather-gemm): operands from per-rank seeds that the host can rebuild, bf16 downloads, a
// host dot product for the reference's own check and the relative comparison of two results (on
// the device for judged calls, the same judgement on host copies for tests).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/problem.hpp"
#include "comm/communicator.hpp"
#include "core/cuda_check.hpp"
#include "core/device_buffer.hpp"
#include "core/fill.hpp"
#include "core/half_bits.hpp"
#include "core/relative_difference.hpp"
#include "core/test_values.hpp"

namespace kiln::problems {

// The seed of operand `which` (0: A, 1: B) of `rank` in the trial of `seed`; values are
// core::uniform_value(operand_seed(...), row * K + k), rounded to bf16 on the device.
inline std::uint64_t operand_seed(std::uint64_t seed, int rank, int which) {
  return core::mix64(seed ^ (0xA11CEull * (which + 1) + static_cast<std::uint64_t>(rank)));
}

// The shape presets of the tensor-parallel GEMM problems (M x N x K per GPU), shared so that
// their rows line up in a suite table.
inline std::vector<bench::ProblemSize> tp_gemm_sizes() {
  const auto shape = [](const char* name, int m, int n, int k) {
    return bench::ProblemSize{name, {{"m", m}, {"n", n}, {"k", k}}};
  };
  return {shape("4096x8192x2048", 4096, 8192, 2048), shape("8192x8192x8192", 8192, 8192, 8192),
          shape("16384x8192x4096", 16384, 8192, 4096)};
}

// Element (row, k) of an operand with K columns, as the device holds it (bf16).
inline double operand_value(std::uint64_t seed, int rank, int which, std::int64_t row, int k,
                            int columns) {
  return core::round_to_bf16(core::uniform_value(operand_seed(seed, rank, which),
                                                 static_cast<std::uint64_t>(row) * columns + k));
}

inline std::vector<float> download_bf16(const void* data, std::size_t count) {
  std::vector<std::uint16_t> raw(count);
  KILN_CUDA_CHECK(cudaMemcpy(raw.data(), data, count * 2, cudaMemcpyDeviceToHost));
  std::vector<float> out(count);
  for (std::size_t i = 0; i < count; ++i)
    out[i] = core::half_bits_to_float(raw[i], core::DType::kBf16);
  return out;
}

// The largest max |got - want| / max |want| that compare_relative accepts for results summed over
// `ranks_summed` ranks in bf16. bf16 GEMMs of K up to 8192 in different orders differ by a few bf16
// ulps of the largest values, inside 1e-2. A reduction over ranks in bf16 (NCCL's bf16 all-reduce
// and reduce-scatter) rounds after each of its ranks - 1 additions, up to half an ulp (2^-9) of a
// partial sum each, and two of them that add in different orders (the reference's ring and a
// solution's, whose buffer positions differ) may differ by twice that: on 4xH100 a correct serial
// all-reduce of reordered tiles differed from the reference by 2 and 4 (ulps) at max |want| 164
// and 344 (2026-11-27). A missing rank or a wrong tile is off by a large fraction of max |want|.
inline double relative_tolerance(int ranks_summed) {
  return std::max(1e-2, (ranks_summed - 1) * std::ldexp(1.0, -7));
}

// "" when |got - want| <= relative_tolerance(ranks_summed) * max |want| everywhere and both are
// finite (a poisoned, unwritten element is NaN), else the first problem found. `d` comes from the
// device (core::RelativeDifferenceMeter) or from the host (compare_relative).
inline std::string judge_relative(const core::RelativeDifference& d, int rank, int ranks_summed) {
  if (d.first_nonfinite_want) {
    return fmt::format("rank {}: reference element {} is not finite", rank,
                       *d.first_nonfinite_want);
  }
  if (d.first_nonfinite_got) {
    return fmt::format("rank {}: element {} is not finite (unwritten)", rank,
                       *d.first_nonfinite_got);
  }
  const double tolerance = relative_tolerance(ranks_summed);
  if (d.max_abs_difference > tolerance * d.max_abs_want) {
    return fmt::format("rank {}: max |difference| {} is above {:.3g} of max |reference| {}", rank,
                       d.max_abs_difference, tolerance, d.max_abs_want);
  }
  return "";
}

// What core::RelativeDifferenceMeter measures on the device, over host copies.
inline core::RelativeDifference host_relative_difference(const std::vector<float>& want,
                                                         const std::vector<float>& got) {
  core::RelativeDifference d;
  for (std::size_t e = 0; e < want.size(); ++e) {
    const bool want_ok = std::isfinite(want[e]), got_ok = std::isfinite(got[e]);
    if (!want_ok && !d.first_nonfinite_want) d.first_nonfinite_want = e;
    if (!got_ok && !d.first_nonfinite_got) d.first_nonfinite_got = e;
    if (want_ok) d.max_abs_want = std::max(d.max_abs_want, static_cast<double>(std::abs(want[e])));
    if (want_ok && got_ok) {
      d.max_abs_difference =
          std::max(d.max_abs_difference, static_cast<double>(std::abs(got[e] - want[e])));
    }
  }
  return d;
}

// The same judgement over host copies.
inline std::string compare_relative(const std::vector<float>& want, const std::vector<float>& got,
                                    int rank, int ranks_summed) {
  return judge_relative(host_relative_difference(want, got), rank, ranks_summed);
}

// The host's check of one element that sums `terms` products of uniform(-1, 1) values (standard
// deviation sqrt(terms) / 3): within 2e-2 * sqrt(terms / 3), several bf16 output ulps of the
// largest such sums, while a wrong row, column or missing rank is off by about the sum itself.
inline bool close_to_host(double got, double want, double terms) {
  return std::abs(got - want) <= 2e-2 * std::sqrt(terms / 3.0);
}

// Base of a tensor-parallel GEMM run: this rank's A (a_rows x K) and B (N x K, C = A·Bᵀ) from
// its operand seeds, reference and solution outputs of out_rows x N (bf16), poisoned per trial.
// A lives in a_ unless the derived run points a_ptr_ at memory of its own (peer memory) and
// passes allocate_a = false.
class TpGemmRun : public bench::ProblemRun {
 public:
  TpGemmRun(bench::RankContext& context, int m, int n, int k, int a_rows, int out_rows,
            bool allocate_a = true)
      : context_(context),
        m_(m),
        n_(n),
        k_(k),
        a_rows_(a_rows),
        out_rows_(out_rows),
        a_(allocate_a ? static_cast<std::size_t>(a_rows) * k * 2 : 0),
        b_(static_cast<std::size_t>(n) * k * 2),
        reference_out_(static_cast<std::size_t>(out_rows) * n * 2),
        solution_out_(reference_out_.bytes()),
        a_ptr_(a_.data()) {}

  void make_inputs(std::uint64_t seed) override {
    seed_ = seed;
    const int rank = context_.comm.rank();
    core::fill_uniform(a_ptr_, core::DType::kBf16, static_cast<std::uint64_t>(a_rows_) * k_,
                       operand_seed(seed, rank, 0), context_.stream);
    core::fill_uniform(b_.data(), core::DType::kBf16, static_cast<std::uint64_t>(n_) * k_,
                       operand_seed(seed, rank, 1), context_.stream);
  }
  void poison_outputs() override {
    core::poison(reference_out_.data(), reference_out_.bytes(), context_.stream);
    core::poison(solution_out_.data(), solution_out_.bytes(), context_.stream);
  }
  std::string compare() override {
    return judge_relative(meter_.measure_bf16(reference_out_.data(), solution_out_.data(),
                                              reference_out_.bytes() / 2, context_.stream),
                          context_.comm.rank(), ranks_summed_);
  }

 protected:
  // The reference's own check on a few output elements (first, last, middle rows and columns):
  // `want(row, col, terms)` returns the host's double value and sets the number of products.
  template <typename Want>
  std::string check_samples(Want&& want) {
    const std::vector<float> out = download_bf16(reference_out_.data(), reference_out_.bytes() / 2);
    for (const auto& [i, j] : std::vector<std::pair<int, int>>{
             {0, 0}, {1, n_ - 1}, {out_rows_ / 2, n_ / 3}, {out_rows_ - 1, 7 % n_}}) {
      double terms = 0;
      const double expected = want(i, j, terms);
      const double got = out[static_cast<std::size_t>(i) * n_ + j];
      if (!close_to_host(got, expected, terms)) {
        return fmt::format("rank {}: reference C[{}][{}] is {}, the host's {}",
                           context_.comm.rank(), i, j, got, expected);
      }
    }
    return "";
  }
  // Σ_k A_source[a_row][k] · B_b_rank[col][k] in double, as the host rebuilds the operands.
  double host_dot(int source, int a_row, int b_rank, int col) const {
    double sum = 0;
    for (int k = 0; k < k_; ++k) {
      sum += operand_value(seed_, source, 0, a_row, k, k_) *
             operand_value(seed_, b_rank, 1, col, k, k_);
    }
    return sum;
  }

  bench::RankContext& context_;
  int m_, n_, k_, a_rows_, out_rows_;
  // Ranks whose partial products each output element sums (world for the all-reduce and
  // reduce-scatter problems, 1 for the all-gather GEMM): compare()'s tolerance.
  int ranks_summed_ = 1;
  std::uint64_t seed_ = 0;
  core::DeviceBuffer a_, b_, reference_out_, solution_out_;
  void* a_ptr_;                          // this rank's A
  core::RelativeDifferenceMeter meter_;  // compare() on the device
};

}  // namespace kiln::problems
