// The element-wise kb1 problems: activations (19-32, 88) and matrix-scalar (5), after
// KernelBench level 1. One spec per problem (data); one problem class. Reference: a scalar
// kernel, one element per thread; solution "kiln": 16-byte vectorized grid-stride kernel.
#include <fmt/format.h>

#include <cmath>

#include "comm/communicator.hpp"
#include "core/cuda_check.hpp"
#include "core/fill.hpp"
#include "core/test_values.hpp"
#include "problems/kb1_common.hpp"
#include "problems/kb1_elementwise_kernels.hpp"
#include "problems/registry.hpp"

namespace kiln::problems {
namespace {

using kb1::UnaryOp;

struct UnarySpec {
  int id;
  const char* slug;
  const char* description;
  UnaryOp op;
  std::int64_t rows, cols;   // KernelBench's sizes
  double flops_per_element;  // nominal, for T_roof's compute side (memory binds all of these)
};

const std::vector<UnarySpec>& unary_specs() {
  static const std::vector<UnarySpec> specs = {
      {5, "matrix-scalar", "A * 3.14 for A of 65536x16384", UnaryOp::kScale314, 65536, 16384, 1},
      {19, "relu", "torch.relu(x), x of 4096x393216", UnaryOp::kRelu, 4096, 393216, 1},
      {20, "leaky-relu", "leaky_relu(x, 0.01)", UnaryOp::kLeakyRelu, 4096, 393216, 2},
      {21, "sigmoid", "torch.sigmoid(x)", UnaryOp::kSigmoid, 4096, 393216, 4},
      {22, "tanh", "torch.tanh(x)", UnaryOp::kTanh, 4096, 393216, 6},
      {25, "swish", "x * sigmoid(x)", UnaryOp::kSwish, 4096, 393216, 5},
      {26, "gelu", "gelu(x), exact (erf)", UnaryOp::kGelu, 4096, 393216, 8},
      {27, "selu", "torch.selu(x)", UnaryOp::kSelu, 4096, 393216, 5},
      {28, "hardsigmoid", "hardsigmoid(x)", UnaryOp::kHardSigmoid, 4096, 393216, 3},
      {29, "softplus", "softplus(x), beta 1, threshold 20", UnaryOp::kSoftplus, 4096, 393216, 6},
      {30, "softsign", "x / (1 + |x|)", UnaryOp::kSoftsign, 4096, 393216, 3},
      {31, "elu", "elu(x, alpha 1)", UnaryOp::kElu, 4096, 393216, 5},
      {32, "hardtanh", "hardtanh(x, -1, 1)", UnaryOp::kHardTanh, 4096, 393216, 2},
      {88, "mingpt-new-gelu", "0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))), x of 8192x8192",
       UnaryOp::kNewGelu, 8192, 8192, 10},
  };
  return specs;
}

class UnaryRun final : public bench::ProblemRun {
 public:
  UnaryRun(const UnarySpec& spec, std::int64_t rows, std::int64_t cols, cudaStream_t stream)
      : spec_(spec),
        rows_(rows),
        cols_(cols),
        count_(rows * cols),
        stream_(stream),
        x_(bytes()),
        reference_(bytes()),
        solution_(bytes()) {}
  void make_inputs(std::uint64_t seed) override {
    kb1::fill_row_varied(x_.as<float>(), rows_, cols_, seed, false, stream_);
  }
  void poison_outputs() override {
    core::poison(reference_.data(), bytes(), stream_);
    core::poison(solution_.data(), bytes(), stream_);
  }
  void reference() override {
    kb1::launch_unary_reference(spec_.op, x_.as<float>(), reference_.as<float>(), count_, stream_);
  }
  void solution(int) override {
    kb1::launch_unary_kiln(spec_.op, x_.as<float>(), solution_.as<float>(), count_, stream_);
  }
  std::string check_reference() override {
    KILN_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const kb1::Sample x = kb1::sample_floats(x_.as<float>(), count_, 1 << 16);
    const kb1::Sample y = kb1::sample_floats(reference_.as<float>(), count_, 1 << 16);
    for (std::size_t i = 0; i < x.value.size(); ++i) {
      const double want = kb1::unary_host(spec_.op, x.value[i]);
      if (!(std::fabs(y.value[i] - want) <= kb1::kTolerance * (1.0 + std::fabs(want)))) {
        return fmt::format("element {}: f({:.9g}) = {:.9g} on the host, the reference wrote {:.9g}",
                           x.index[i], x.value[i], want, y.value[i]);
      }
    }
    return "";
  }
  std::string compare() override {
    return kb1::describe(kb1::compare_floats(solution_.as<float>(), reference_.as<float>(), count_,
                                             kb1::kTolerance, kb1::kTolerance, stream_),
                         count_, kb1::kTolerance);
  }
  bench::CandidateBuffers candidate_buffers() override {
    return bench::one_rank_buffers({{x_.data(), bytes()}}, solution_.data(), bytes());
  }

 private:
  std::uint64_t bytes() const { return static_cast<std::uint64_t>(count_) * sizeof(float); }
  const UnarySpec& spec_;
  std::int64_t rows_, cols_, count_;
  cudaStream_t stream_;
  core::DeviceBuffer x_, reference_, solution_;
};

class UnaryProblem final : public bench::Problem {
 public:
  explicit UnaryProblem(const UnarySpec& spec) : spec_(spec) {}
  std::string name() const override { return fmt::format("kb1-{}-{}", spec_.id, spec_.slug); }
  bench::Category category() const override { return bench::Category::kSingleGpu; }
  std::string description() const override { return spec_.description; }
  std::vector<bench::ProblemSize> sizes() const override {
    return {kb1::size_of("small", {{"rows", kb1::small_dim(spec_.rows)},
                                   {"cols", kb1::small_dim(spec_.cols)}}),
            kb1::size_of("kb", {{"rows", spec_.rows}, {"cols", spec_.cols}})};
  }
  std::vector<std::string> solutions() const override { return {"kiln"}; }
  std::optional<core::DType> fixed_dtype() const override { return core::DType::kFp32; }
  roofline::CostModel cost(const bench::ProblemSize& size, core::DType, int) const override {
    const double n = static_cast<double>(size.dim("rows")) * size.dim("cols");
    return {{{"elementwise",
              {{"map", n * spec_.flops_per_element, roofline::Precision::kFp32, 8.0 * n, 0}}}}};
  }
  // Every input element is read and every output element written once; one operation each.
  std::optional<roofline::CostModel> floor_cost(const bench::ProblemSize& size, core::DType,
                                                int) const override {
    const double n = static_cast<double>(size.dim("rows")) * size.dim("cols");
    return roofline::CostModel{
        {{"elementwise", {{"map", n, roofline::Precision::kFp32, 8.0 * n, 0}}}}};
  }
  std::unique_ptr<bench::ProblemRun> start(const bench::ProblemSize& size,
                                           bench::RankContext& context) const override {
    kb1::require_one_rank(context, name());
    return std::make_unique<UnaryRun>(spec_, size.dim("rows"), size.dim("cols"), context.stream);
  }

 private:
  const UnarySpec& spec_;
};

}  // namespace

void add_kb1_elementwise(bench::ProblemList& list) {
  for (const UnarySpec& spec : unary_specs()) list.push_back(std::make_unique<UnaryProblem>(spec));
}

}  // namespace kiln::problems
