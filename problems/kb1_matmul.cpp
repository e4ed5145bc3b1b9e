// The matmul kb1 problems, after KernelBench level 1 (1-4, 6-18; 5 is element-wise): fp32
// products of plain, batched, broadcast, transposed, triangular and symmetric operands, a
// matrix-vector product and a diagonal scaling. Reference: a plain tiled kernel with double
// accumulators (a warp per row for the matrix-vector product); solution "cublas": the library
// (SGEMM without TF32, as PyTorch's default `allow_tf32 = False`; SGEMV; SDGMM). kiln's own
// kernels for these are the evolution engine's work.
#include <cublas_v2.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "comm/communicator.hpp"
#include "core/cublas_check.hpp"
#include "core/cuda_check.hpp"
#include "core/fill.hpp"
#include "core/test_values.hpp"
#include "problems/kb1_common.hpp"
#include "problems/kb1_matmul_kernels.hpp"
#include "problems/registry.hpp"

namespace kiln::problems {
namespace {

enum class Kind { kGemm, kGemv, kDiag };
enum class Operands { kPlain, kUpper, kLower, kSymmetric };

// One problem's product at one size: batch x (m x k) @ (k x n); A stored k x m when a_t, B
// stored n x k when b_t; B shared by every batch when b_shared.
struct MatmulShape {
  std::int64_t batch = 1, m = 0, n = 0, k = 0;
  bool a_t = false, b_t = false, b_shared = false;
};

struct MatmulSpec {
  int id;
  const char* slug;
  const char* description;
  Kind kind;
  Operands operands;
  std::vector<std::pair<const char*, std::int64_t>> dims;  // KernelBench's names and sizes
  std::function<MatmulShape(const bench::ProblemSize&)> shape;
};

MatmulShape mkn(const bench::ProblemSize& s) {
  return {1, s.dim("M"), s.dim("N"), s.dim("K")};
}
MatmulShape square(const bench::ProblemSize& s) {
  const std::int64_t n = s.dims.count("N") ? s.dim("N") : s.dim("M");
  return {1, n, n, n};
}

const std::vector<MatmulSpec>& matmul_specs() {
  using S = bench::ProblemSize;
  static const std::vector<MatmulSpec> specs = {
      {1,
       "square-matmul",
       "A @ B, both 4096x4096",
       Kind::kGemm,
       Operands::kPlain,
       {{"N", 4096}},
       square},
      {2,
       "matmul",
       "A @ B, 2048x8192 @ 8192x4096",
       Kind::kGemm,
       Operands::kPlain,
       {{"M", 2048}, {"K", 8192}, {"N", 4096}},
       mkn},
      {3,
       "batched-matmul",
       "torch.bmm, 128 x (512x1024 @ 1024x2048)",
       Kind::kGemm,
       Operands::kPlain,
       {{"batch", 128}, {"m", 512}, {"k", 1024}, {"n", 2048}},
       [](const S& s) {
         return MatmulShape{s.dim("batch"), s.dim("m"), s.dim("n"), s.dim("k")};
       }},
      {4,
       "matvec",
       "A @ b, 2048x1048576 @ 1048576x1",
       Kind::kGemv,
       Operands::kPlain,
       {{"M", 2048}, {"K", 1048576}},
       [](const S& s) {
         return MatmulShape{1, s.dim("M"), 1, s.dim("K")};
       }},
      {6,
       "matmul-large-k",
       "A @ B, 256x524288 @ 524288x256",
       Kind::kGemm,
       Operands::kPlain,
       {{"M", 256}, {"N", 256}, {"K", 524288}},
       mkn},
      {7,
       "matmul-small-k",
       "A @ B, 32768x64 @ 64x32768",
       Kind::kGemm,
       Operands::kPlain,
       {{"M", 32768}, {"N", 32768}, {"K", 64}},
       mkn},
      {8,
       "matmul-irregular",
       "A @ B, 8205x2949 @ 2949x5921 (every size)",
       Kind::kGemm,
       Operands::kPlain,
       {{"M", 8205}, {"K", 2949}, {"N", 5921}},
       mkn},
      {9,
       "tall-skinny-matmul",
       "A @ B, 32768x32 @ 32x32768",
       Kind::kGemm,
       Operands::kPlain,
       {{"M", 32768}, {"N", 32}},
       [](const S& s) {
         return MatmulShape{1, s.dim("M"), s.dim("M"), s.dim("N")};
       }},
      {10,
       "3d-tensor-matmul",
       "A @ B, 16x1024x2048 @ 2048x768 (B shared)",
       Kind::kGemm,
       Operands::kPlain,
       {{"N", 16}, {"M", 1024}, {"K", 2048}, {"L", 768}},
       [](const S& s) {
         return MatmulShape{1, s.dim("N") * s.dim("M"), s.dim("L"), s.dim("K")};
       }},
      {11,
       "4d-tensor-matmul",
       "einsum('bijl,lk->bijk'), 8x256x512x256 @ 256x768",
       Kind::kGemm,
       Operands::kPlain,
       {{"b", 8}, {"i", 256}, {"j", 512}, {"l", 256}, {"k", 768}},
       [](const S& s) {
         return MatmulShape{1, s.dim("b") * s.dim("i") * s.dim("j"), s.dim("k"), s.dim("l")};
       }},
      {12,
       "diag-matmul",
       "diag(A) @ B as A[:, None] * B, A of 4096, B of 4096x4096",
       Kind::kDiag,
       Operands::kPlain,
       {{"M", 4096}, {"N", 4096}},
       [](const S& s) {
         return MatmulShape{1, s.dim("N"), s.dim("M"), 1};
       }},
      {13,
       "symmetric-matmul",
       "A @ B, A and B symmetric 4096x4096",
       Kind::kGemm,
       Operands::kSymmetric,
       {{"N", 4096}},
       square},
      {14,
       "upper-triangular-matmul",
       "triu(A @ B), A and B upper triangular 4096x4096",
       Kind::kGemm,
       Operands::kUpper,
       {{"N", 4096}},
       square},
      {15,
       "lower-triangular-matmul",
       "tril(A @ B), A and B lower triangular 4096x4096",
       Kind::kGemm,
       Operands::kLower,
       {{"M", 4096}},
       square},
      {16,
       "matmul-transposed-a",
       "A.T @ B, A of 8192x2048, B of 8192x4096",
       Kind::kGemm,
       Operands::kPlain,
       {{"M", 2048}, {"K", 8192}, {"N", 4096}},
       [](const S& s) {
         MatmulShape m = mkn(s);
         m.a_t = true;
         return m;
       }},
      {17,
       "matmul-transposed-b",
       "A @ B.T, A of 2048x8192, B of 4096x8192",
       Kind::kGemm,
       Operands::kPlain,
       {{"M", 2048}, {"K", 8192}, {"N", 4096}},
       [](const S& s) {
         MatmulShape m = mkn(s);
         m.b_t = true;
         return m;
       }},
      {18,
       "matmul-transposed-both",
       "A.T @ B.T, A of 8192x2048, B of 4096x8192",
       Kind::kGemm,
       Operands::kPlain,
       {{"M", 2048}, {"K", 8192}, {"N", 4096}},
       [](const S& s) {
         MatmulShape m = mkn(s);
         m.a_t = m.b_t = true;
         return m;
       }},
  };
  return specs;
}

kb1::GemmOperands operands_of(const MatmulShape& s) {
  kb1::GemmOperands g;
  g.batch = s.batch;
  g.m = s.m;
  g.n = s.n;
  g.k = s.k;
  g.a_batch = s.m * s.k;
  g.a_row = s.a_t ? 1 : s.k;
  g.a_col = s.a_t ? s.m : 1;
  g.b_batch = s.b_shared ? 0 : s.k * s.n;
  g.b_row = s.b_t ? 1 : s.n;
  g.b_col = s.b_t ? s.k : 1;
  return g;
}

class MatmulRun final : public bench::ProblemRun {
 public:
  MatmulRun(const MatmulSpec& spec, MatmulShape shape, cudaStream_t stream)
      : spec_(spec),
        shape_(shape),
        g_(operands_of(shape)),
        stream_(stream),
        a_(sizeof(float) * a_count()),
        b_(sizeof(float) * b_count()),
        reference_(sizeof(float) * c_count()),
        solution_(sizeof(float) * c_count()) {
    KILN_CUBLAS_CHECK(cublasCreate(&handle_));
    KILN_CUBLAS_CHECK(cublasSetStream(handle_, stream_));
    KILN_CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_PEDANTIC_MATH));  // no TF32
  }
  ~MatmulRun() override { cublasDestroy(handle_); }
  // Positive operands, as KernelBench's torch.rand: with signed ones, dot products that cancel
  // to near 0 over thousands of terms fail atol 1e-4 in any fp32 order (cuBLAS missed the double
  // reference by 1.8e-4 on K = 2949 and 32768, docs/results/2026-11-24-kb1/ run 2). Each row still
  // has its own scale and a few spikes, so sampling does not predict a product.
  void make_inputs(std::uint64_t seed) override {
    if (spec_.kind == Kind::kDiag) {
      kb1::fill_row_varied(a_.as<float>(), 1, a_count(), seed, true, stream_);
    } else {
      kb1::fill_row_varied(a_.as<float>(), a_count() / a_cols(), a_cols(), seed, true, stream_);
    }
    kb1::fill_row_varied(b_.as<float>(), b_count() / b_cols(), b_cols(), core::mix64(seed + 1),
                         true, stream_);
    for (float* m : {a_.as<float>(), b_.as<float>()}) {
      if (spec_.operands == Operands::kUpper || spec_.operands == Operands::kLower)
        kb1::keep_triangle(m, shape_.m, spec_.operands == Operands::kUpper, stream_);
      if (spec_.operands == Operands::kSymmetric) kb1::symmetrize(m, shape_.m, stream_);
    }
  }
  void poison_outputs() override {
    core::poison(reference_.data(), reference_.bytes(), stream_);
    core::poison(solution_.data(), solution_.bytes(), stream_);
  }
  void reference() override {
    float* c = reference_.as<float>();
    if (spec_.kind == Kind::kGemv) {
      kb1::launch_gemv_reference(a_.as<float>(), b_.as<float>(), c, shape_.m, shape_.k, stream_);
    } else if (spec_.kind == Kind::kDiag) {
      kb1::launch_row_scale_reference(a_.as<float>(), b_.as<float>(), c, shape_.m, shape_.n,
                                      stream_);
    } else {
      kb1::launch_gemm_reference(g_, a_.as<float>(), b_.as<float>(), c, stream_);
    }
  }
  void solution(int) override {
    const float one = 1.0f, zero = 0.0f;
    float* c = solution_.as<float>();
    const int m = static_cast<int>(shape_.m), n = static_cast<int>(shape_.n),
              k = static_cast<int>(shape_.k);
    if (spec_.kind == Kind::kGemv) {
      // Row-major A (m x k) is column-major A^T (k x m): y = (A^T)^T x.
      KILN_CUBLAS_CHECK(cublasSgemv(handle_, CUBLAS_OP_T, k, m, &one, a_.as<float>(), k,
                                    b_.as<float>(), 1, &zero, c, 1));
    } else if (spec_.kind == Kind::kDiag) {
      // Row-major B (m x n) is column-major B^T (n x m); scaling B's rows scales B^T's columns.
      KILN_CUBLAS_CHECK(cublasSdgmm(handle_, CUBLAS_SIDE_RIGHT, n, m, b_.as<float>(), n,
                                    a_.as<float>(), 1, c, n));
    } else {
      // Row-major C = A B is column-major C^T = B^T A^T: B first.
      const cublasOperation_t op_b = shape_.b_t ? CUBLAS_OP_T : CUBLAS_OP_N;
      const cublasOperation_t op_a = shape_.a_t ? CUBLAS_OP_T : CUBLAS_OP_N;
      const int ldb = shape_.b_t ? k : n, lda = shape_.a_t ? m : k;
      KILN_CUBLAS_CHECK(cublasSgemmStridedBatched(
          handle_, op_b, op_a, n, m, k, &one, b_.as<float>(), ldb, g_.b_batch, a_.as<float>(), lda,
          g_.a_batch, &zero, c, n, shape_.m * shape_.n, static_cast<int>(shape_.batch)));
    }
  }
  std::string check_reference() override {
    // 64 outputs at fixed pseudo-random positions (and the corners), each a dot product in
    // double on the host from copies of its row of A and column of B.
    KILN_CUDA_CHECK(cudaStreamSynchronize(stream_));
    for (int t = 0; t < 64; ++t) {
      const std::uint64_t h = core::mix64(0xC0FFEEull + t);
      const std::int64_t batch = t < 2 ? 0 : static_cast<std::int64_t>(h % shape_.batch);
      const std::int64_t i = t == 0 ? 0 : (t == 1 ? shape_.m - 1 : (h >> 16) % shape_.m);
      const std::int64_t j = t == 0 ? 0 : (t == 1 ? shape_.n - 1 : (h >> 40) % shape_.n);
      double want = 0.0;
      if (spec_.kind == Kind::kDiag) {
        want = static_cast<double>(copy_strided(a_.as<float>() + i, 1, 1)[0]) *
               copy_strided(b_.as<float>() + i * shape_.n + j, 1, 1)[0];
      } else {
        const std::vector<float> a =
            copy_strided(a_.as<float>() + batch * g_.a_batch + i * g_.a_row, g_.a_col, shape_.k);
        const std::vector<float> b =
            copy_strided(b_.as<float>() + batch * g_.b_batch + j * g_.b_col, g_.b_row, shape_.k);
        for (std::int64_t kk = 0; kk < shape_.k; ++kk)
          want += static_cast<double>(a[static_cast<std::size_t>(kk)]) *
                  b[static_cast<std::size_t>(kk)];
      }
      const float got =
          copy_strided(reference_.as<float>() + (batch * shape_.m + i) * shape_.n + j, 1, 1)[0];
      if (!(std::fabs(got - want) <= kb1::kTolerance * (1.0 + std::fabs(want)))) {
        return fmt::format("C[{}][{}][{}]: {:.9g} on the host, the reference wrote {:.9g}", batch,
                           i, j, want, got);
      }
    }
    return "";
  }
  std::string compare() override {
    return kb1::describe(kb1::compare_floats(solution_.as<float>(), reference_.as<float>(),
                                             c_count(), kb1::kTolerance, kb1::kTolerance, stream_),
                         c_count(), kb1::kTolerance);
  }
  bench::CandidateBuffers candidate_buffers() override {
    return bench::one_rank_buffers({{a_.data(), a_.bytes()}, {b_.data(), b_.bytes()}},
                                   solution_.data(), solution_.bytes());
  }
  std::vector<OutputSpan> reference_outputs() override {
    return {{reference_.data(), reference_.bytes()}};
  }

 private:
  std::int64_t a_count() const {
    return spec_.kind == Kind::kDiag ? shape_.m : shape_.batch * shape_.m * shape_.k;
  }
  std::int64_t a_cols() const { return shape_.a_t ? shape_.m : shape_.k; }
  std::int64_t b_count() const {
    if (spec_.kind == Kind::kDiag) return shape_.m * shape_.n;
    return (shape_.b_shared ? 1 : shape_.batch) * shape_.k * shape_.n;
  }
  std::int64_t b_cols() const {
    if (spec_.kind == Kind::kDiag) return shape_.n;
    return shape_.b_t ? shape_.k : shape_.n;
  }
  std::int64_t c_count() const { return shape_.batch * shape_.m * shape_.n; }
  // `count` floats from `data` at `stride` floats apart, to the host.
  static std::vector<float> copy_strided(const float* data, std::int64_t stride,
                                         std::int64_t count) {
    std::vector<float> out(static_cast<std::size_t>(count));
    if (stride == 1) {
      KILN_CUDA_CHECK(
          cudaMemcpy(out.data(), data, sizeof(float) * out.size(), cudaMemcpyDeviceToHost));
      return out;
    }
    KILN_CUDA_CHECK(cudaMemcpy2D(out.data(), sizeof(float), data, sizeof(float) * stride,
                                 sizeof(float), count, cudaMemcpyDeviceToHost));
    return out;
  }

  const MatmulSpec& spec_;
  MatmulShape shape_;
  kb1::GemmOperands g_;
  cudaStream_t stream_;
  cublasHandle_t handle_ = nullptr;
  core::DeviceBuffer a_, b_, reference_, solution_;
};

class MatmulProblem final : public bench::Problem {
 public:
  explicit MatmulProblem(const MatmulSpec& spec) : spec_(spec) {}
  std::string name() const override { return fmt::format("kb1-{}-{}", spec_.id, spec_.slug); }
  bench::Category category() const override { return bench::Category::kSingleGpu; }
  std::string description() const override { return spec_.description; }
  std::vector<bench::ProblemSize> sizes() const override {
    bench::ProblemSize small{"small", {}}, kb{"kb", {}};
    for (const auto& [key, value] : spec_.dims) {
      small.dims[key] = spec_.id == 8 ? value : kb1::small_dim(value);
      kb.dims[key] = value;
    }
    return {small, kb};
  }
  std::vector<std::string> solutions() const override { return {"cublas"}; }
  std::optional<core::DType> fixed_dtype() const override { return core::DType::kFp32; }
  // T_roof: the product by 3xTF32 (three TF32 tensor-core products per fp32 one, the fastest
  // way to fp32 accuracy on the tensor cores) and the operands moved once.
  roofline::CostModel cost(const bench::ProblemSize& size, core::DType, int) const override {
    return model(size, 3.0);
  }
  // The floor: one TF32 product per multiply-add (more generous than any fp32-accurate
  // method), triangular products counting only the non-zero terms.
  std::optional<roofline::CostModel> floor_cost(const bench::ProblemSize& size, core::DType,
                                                int) const override {
    return model(size, 1.0);
  }
  std::unique_ptr<bench::ProblemRun> start(const bench::ProblemSize& size,
                                           bench::RankContext& context) const override {
    kb1::require_one_rank(context, name());
    return std::make_unique<MatmulRun>(spec_, spec_.shape(size), context.stream);
  }

 private:
  roofline::CostModel model(const bench::ProblemSize& size, double tf32_products) const {
    const MatmulShape s = spec_.shape(size);
    const double m = s.m, n = s.n, k = s.k, batch = s.batch;
    if (spec_.kind == Kind::kDiag) {
      return {
          {{"scale", {{"scale", m * n, roofline::Precision::kFp32, 4.0 * (m + 2 * m * n), 0}}}}};
    }
    double flops = 2.0 * batch * m * n * k;
    if (spec_.operands == Operands::kUpper || spec_.operands == Operands::kLower)
      flops = m * m * m / 3.0;  // sum over i <= j of (j - i + 1) multiply-adds, twice
    const double bytes = 4.0 * (batch * m * k + (s.b_shared ? 1.0 : batch) * k * n + batch * m * n);
    const roofline::Precision precision =
        spec_.kind == Kind::kGemv ? roofline::Precision::kFp32 : roofline::Precision::kTf32Tensor;
    return {{{"matmul", {{"matmul", flops * tf32_products, precision, bytes, 0}}}}};
  }
  const MatmulSpec& spec_;
};

}  // namespace

void add_kb1_matmul(bench::ProblemList& list) {
  for (const MatmulSpec& spec : matmul_specs())
    list.push_back(std::make_unique<MatmulProblem>(spec));
}

}  // namespace kiln::problems
