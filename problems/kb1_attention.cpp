// kb1-97-sdpa: scaled dot-product attention after KernelBench level 1 (no mask, no dropout,
// scale 1/sqrt(d)): O = softmax(Q K^T / sqrt(d)) V for Q, K, V of (batch, heads, seq, d), fp32.
// Reference: the plain double-accumulating GEMM kernel twice around the chunked-double softmax
// (kb1_matmul_kernels, kb1_norm_kernels), the scores held whole. Solution "cublas": strided
// batched SGEMM (no TF32) twice around kiln's softmax kernel. A fused kernel (never writing the
// scores) is the evolution engine's work.
#include <cublas_v2.h>
#include <fmt/format.h>

#include <cmath>

#include "comm/communicator.hpp"
#include "core/cublas_check.hpp"
#include "core/cuda_check.hpp"
#include "core/fill.hpp"
#include "core/test_values.hpp"
#include "problems/kb1_common.hpp"
#include "problems/kb1_matmul_kernels.hpp"
#include "problems/kb1_norm_kernels.hpp"
#include "problems/registry.hpp"

namespace kiln::problems {
namespace {

struct AttentionShape {
  std::int64_t heads_total, seq, d;  // heads_total = batch * heads
};

class AttentionRun final : public bench::ProblemRun {
 public:
  AttentionRun(AttentionShape s, cudaStream_t stream)
      : s_(s),
        stream_(stream),
        qkv_bytes_(sizeof(float) * s.heads_total * s.seq * s.d),
        q_(qkv_bytes_),
        k_(qkv_bytes_),
        v_(qkv_bytes_),
        reference_(qkv_bytes_),
        solution_(qkv_bytes_),
        scores_(sizeof(float) * s.heads_total * s.seq * s.seq),
        scratch_(sizeof(double) * std::max(kb1::norm_scratch_doubles(softmax_shape(), false),
                                           kb1::norm_scratch_doubles(softmax_shape(), true))) {
    KILN_CUBLAS_CHECK(cublasCreate(&handle_));
    KILN_CUBLAS_CHECK(cublasSetStream(handle_, stream_));
    KILN_CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_PEDANTIC_MATH));
  }
  ~AttentionRun() override { cublasDestroy(handle_); }
  void make_inputs(std::uint64_t seed) override {
    const std::int64_t rows = s_.heads_total * s_.seq;
    kb1::fill_row_varied(q_.as<float>(), rows, s_.d, seed, false, stream_);
    kb1::fill_row_varied(k_.as<float>(), rows, s_.d, core::mix64(seed + 1), false, stream_);
    kb1::fill_row_varied(v_.as<float>(), rows, s_.d, core::mix64(seed + 2), false, stream_);
  }
  void poison_outputs() override {
    core::poison(reference_.data(), qkv_bytes_, stream_);
    core::poison(solution_.data(), qkv_bytes_, stream_);
  }
  void reference() override {
    kb1::GemmOperands qk;  // S = Q K^T per head
    qk.batch = s_.heads_total;
    qk.m = qk.n = s_.seq;
    qk.k = s_.d;
    qk.a_batch = qk.b_batch = s_.seq * s_.d;
    qk.a_row = s_.d;
    qk.a_col = 1;
    qk.b_row = 1;
    qk.b_col = s_.d;
    kb1::launch_gemm_reference(qk, q_.as<float>(), k_.as<float>(), scores_.as<float>(), stream_);
    kb1::scale_in_place(scores_.as<float>(), s_.heads_total * s_.seq * s_.seq, scale(), stream_);
    kb1::launch_norm_reference(kb1::NormOp::kSoftmax, softmax_shape(), scores_.as<float>(),
                               scores_.as<float>(), scratch_.as<double>(), stream_);
    kb1::GemmOperands pv;  // O = P V per head
    pv.batch = s_.heads_total;
    pv.m = s_.seq;
    pv.n = s_.d;
    pv.k = s_.seq;
    pv.a_batch = s_.seq * s_.seq;
    pv.a_row = s_.seq;
    pv.a_col = 1;
    pv.b_batch = s_.seq * s_.d;
    pv.b_row = s_.d;
    pv.b_col = 1;
    kb1::launch_gemm_reference(pv, scores_.as<float>(), v_.as<float>(), reference_.as<float>(),
                               stream_);
  }
  void solution(int) override {
    const float alpha = scale(), one = 1.0f, zero = 0.0f;
    const int n = static_cast<int>(s_.seq), d = static_cast<int>(s_.d),
              batch = static_cast<int>(s_.heads_total);
    // Row-major S = Q K^T is column-major S^T = K Q^T: K's stored rows transposed, Q as stored.
    KILN_CUBLAS_CHECK(cublasSgemmStridedBatched(
        handle_, CUBLAS_OP_T, CUBLAS_OP_N, n, n, d, &alpha, k_.as<float>(), d, s_.seq * s_.d,
        q_.as<float>(), d, s_.seq * s_.d, &zero, scores_.as<float>(), n, s_.seq * s_.seq, batch));
    kb1::launch_norm_kiln(kb1::NormOp::kSoftmax, softmax_shape(), scores_.as<float>(),
                          scores_.as<float>(), scratch_.as<double>(), stream_);
    // Row-major O = P V is column-major O^T = V^T P^T.
    KILN_CUBLAS_CHECK(cublasSgemmStridedBatched(handle_, CUBLAS_OP_N, CUBLAS_OP_N, d, n, n, &one,
                                                v_.as<float>(), d, s_.seq * s_.d,
                                                scores_.as<float>(), n, s_.seq * s_.seq, &zero,
                                                solution_.as<float>(), d, s_.seq * s_.d, batch));
  }
  std::string check_reference() override {
    // Rows of the first and the last head, each a full attention row in double on the host.
    KILN_CUDA_CHECK(cudaStreamSynchronize(stream_));
    for (const std::int64_t head : {std::int64_t{0}, s_.heads_total - 1}) {
      const std::size_t per_head = static_cast<std::size_t>(s_.seq * s_.d);
      std::vector<float> q(per_head), k(per_head), v(per_head), o(per_head);
      for (auto [host, device] : {std::pair{&q, &q_}, std::pair{&k, &k_}, std::pair{&v, &v_},
                                  std::pair{&o, &reference_}}) {
        KILN_CUDA_CHECK(cudaMemcpy(host->data(), device->as<float>() + head * per_head,
                                   sizeof(float) * per_head, cudaMemcpyDeviceToHost));
      }
      for (const std::int64_t i : {std::int64_t{0}, s_.seq / 2, s_.seq - 1}) {
        std::vector<double> p(static_cast<std::size_t>(s_.seq));
        double top = -INFINITY, sum = 0.0;
        for (std::int64_t j = 0; j < s_.seq; ++j) {
          double dot = 0.0;
          for (std::int64_t c = 0; c < s_.d; ++c)
            dot += static_cast<double>(q[i * s_.d + c]) * k[j * s_.d + c];
          p[j] = dot / std::sqrt(static_cast<double>(s_.d));
          top = std::max(top, p[j]);
        }
        for (double& x : p) sum += (x = std::exp(x - top));
        for (std::int64_t c = 0; c < s_.d; ++c) {
          double want = 0.0;
          for (std::int64_t j = 0; j < s_.seq; ++j) want += p[j] / sum * v[j * s_.d + c];
          const double got = o[i * s_.d + c];
          if (!(std::fabs(got - want) <= kb1::kTolerance * (1.0 + std::fabs(want)))) {
            return fmt::format(
                "head {} row {} column {}: {:.9g} on the host, the reference "
                "wrote {:.9g}",
                head, i, c, want, got);
          }
        }
      }
    }
    return "";
  }
  std::string compare() override {
    const std::int64_t count = s_.heads_total * s_.seq * s_.d;
    return kb1::describe(kb1::compare_floats(solution_.as<float>(), reference_.as<float>(), count,
                                             kb1::kTolerance, kb1::kTolerance, stream_),
                         count, kb1::kTolerance);
  }
  bench::CandidateBuffers candidate_buffers() override {
    return bench::one_rank_buffers(
        {{q_.data(), qkv_bytes_}, {k_.data(), qkv_bytes_}, {v_.data(), qkv_bytes_}},
        solution_.data(), qkv_bytes_);
  }
  std::vector<OutputSpan> reference_outputs() override {
    return {{reference_.data(), reference_.bytes()}};
  }

 private:
  float scale() const { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(s_.d))); }
  kb1::NormShape softmax_shape() const {
    return {s_.heads_total * s_.seq, s_.seq, 1, kb1::SegmentAxes::kMiddle};
  }
  AttentionShape s_;
  cudaStream_t stream_;
  std::uint64_t qkv_bytes_;
  cublasHandle_t handle_ = nullptr;
  core::DeviceBuffer q_, k_, v_, reference_, solution_, scores_, scratch_;
};

class Attention final : public bench::Problem {
 public:
  std::string name() const override { return "kb1-97-sdpa"; }
  bench::Category category() const override { return bench::Category::kSingleGpu; }
  std::string description() const override {
    return "scaled_dot_product_attention(Q, K, V), each 32x32x512x1024 (no mask)";
  }
  std::vector<bench::ProblemSize> sizes() const override {
    // Small: scripts/kb1_torch_eager.py's rule (512 / 4, 1024 / 16).
    return {kb1::size_of("small", {{"batch", 32}, {"heads", 32}, {"seq", 128}, {"d", 64}}),
            kb1::size_of("kb", {{"batch", 32}, {"heads", 32}, {"seq", 512}, {"d", 1024}})};
  }
  std::vector<std::string> solutions() const override { return {"cublas"}; }
  std::optional<core::DType> fixed_dtype() const override { return core::DType::kFp32; }
  roofline::CostModel cost(const bench::ProblemSize& size, core::DType, int) const override {
    return model(size, 3.0);
  }
  // Two products at one TF32 product per multiply-add, Q, K, V read and O written once (the
  // scores need never leave the chip).
  std::optional<roofline::CostModel> floor_cost(const bench::ProblemSize& size, core::DType,
                                                int) const override {
    return model(size, 1.0);
  }
  std::unique_ptr<bench::ProblemRun> start(const bench::ProblemSize& size,
                                           bench::RankContext& context) const override {
    kb1::require_one_rank(context, name());
    return std::make_unique<AttentionRun>(
        AttentionShape{size.dim("batch") * size.dim("heads"), size.dim("seq"), size.dim("d")},
        context.stream);
  }

 private:
  static roofline::CostModel model(const bench::ProblemSize& size, double tf32_products) {
    const double h = static_cast<double>(size.dim("batch")) * size.dim("heads");
    const double n = size.dim("seq"), d = size.dim("d");
    return {{{"attention",
              {{"two products", 4.0 * h * n * n * d * tf32_products,
                roofline::Precision::kTf32Tensor, 16.0 * h * n * d, 0}}}}};
  }
};

}  // namespace

void add_kb1_attention(bench::ProblemList& list) {
  list.push_back(std::make_unique<Attention>());
}

}  // namespace kiln::problems
