// One GEMM + AllReduce case of the overlap tests on a rank: per-rank random A and B, an RMSNorm
// weight, and the reference (cuBLAS, then NCCL AllReduce of the products) read back.
#pragma once

#include <nccl.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "comm/communicator.hpp"
#include "core/device_buffer.hpp"
#include "core/fill.hpp"
#include "core/stream.hpp"
#include "device_compare.hpp"
#include "overlap/cublas_gemm.hpp"
#include "overlap/gemm_collective.hpp"

namespace kiln::testing {

struct GemmAllReduceCase {
  // `seed` advances by three (A, B, weight); A and B differ per rank, the weight does not.
  GemmAllReduceCase(comm::Communicator& comm, core::Stream& stream, overlap::CublasGemm& cublas,
                    const overlap::GemmShape& shape, overlap::WeightLayout layout,
                    std::uint64_t& seed)
      : a(std::size_t(shape.m) * shape.k * 2),
        b(std::size_t(shape.n) * shape.k * 2),
        ref(std::size_t(shape.m) * shape.n * 2),
        out(ref.bytes()),
        weight(std::size_t(shape.n) * 2) {
    const std::size_t c_count = std::size_t(shape.m) * shape.n;
    core::fill_uniform(a.data(), core::DType::kBf16, std::size_t(shape.m) * shape.k,
                       ++seed + 31 * comm.rank(), stream);
    core::fill_uniform(b.data(), core::DType::kBf16, std::size_t(shape.n) * shape.k,
                       ++seed + 31 * comm.rank(), stream);
    core::fill_uniform(weight.data(), core::DType::kBf16, shape.n, ++seed, stream);
    cublas.run(shape.m, shape.n, shape.k, core::DType::kBf16, layout, a.data(), b.data(),
               ref.data(), stream);
    comm.call("reference", [&] {
      return ncclAllReduce(ref.data(), ref.data(), c_count, ncclBfloat16, ncclSum, comm.get(),
                           stream);
    });
    comm.wait(stream, "reference");
    want = download_floats(ref.data(), c_count);
    w = download_floats(weight.data(), shape.n);
    const bool nk = layout == overlap::WeightLayout::kNK;
    a_ref = {a.data(), core::DType::kBf16, shape.m, shape.k};
    b_ref = {b.data(), core::DType::kBf16, nk ? shape.n : shape.k, nk ? shape.k : shape.n};
    w_ref = {weight.data(), core::DType::kBf16, 1, shape.n};
  }

  // Row `row` of the reference as run() writes it, or after RMSNorm with the case's weight and
  // `eps` as run_rmsnorm() does.
  std::vector<float> expected_row(int row, bool rmsnorm, float eps = 1e-5f) const {
    const std::size_t n = w.size();
    const float* source = want.data() + std::size_t(row) * n;
    std::vector<float> out_row(source, source + n);
    if (!rmsnorm) return out_row;
    double squares = 0;
    for (std::size_t c = 0; c < n; ++c) squares += double(source[c]) * source[c];
    const double scale = 1.0 / std::sqrt(squares / double(n) + eps);
    for (std::size_t c = 0; c < n; ++c) out_row[c] = float(source[c] * scale * w[c]);
    return out_row;
  }

  core::DeviceBuffer a, b, ref, out, weight;
  std::vector<float> want, w;  // the reference (M×N) and the weight, as floats
  overlap::MatrixRef a_ref, b_ref, w_ref;
};

}  // namespace kiln::testing
