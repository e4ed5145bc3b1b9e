// tp-gemm-allreduce (tensor parallel, row-parallel linear): each rank multiplies its activations
// A (M x K, the rank's slice of the hidden dimension) by its weight shard B (N x K, C = A·Bᵀ) and
// the partial products are summed over the ranks; every rank ends with the M x N sum (bf16).
// Reference: cuBLAS GEMM, then ncclAllReduce. Solution "kiln-overlap": the overlap runtime
// (src/overlap: signaling GEMM, per-wave-group copy-engine exchange, reduction fused into the
// reorder) with a fixed plan that did well on 2xH200 (docs/results/2026-11-23-overlap/).
#include <cmath>
#include <cstring>
#include <memory>

#include "bench/cublas_gemm.hpp"
#include "comm/collective.hpp"
#include "overlap/gemm_collective.hpp"
#include "problems/peer_collective.hpp"
#include "problems/registry.hpp"
#include "roofline/bus_volume.hpp"

namespace kiln::problems {
namespace {

constexpr const char* kPlan = "tile=128x256 cap=128 comm=ce groups=each";

std::uint64_t operand_seed(std::uint64_t seed, int rank, int which) {
  return core::mix64(seed ^ (0xA11CEull * (which + 1) + static_cast<std::uint64_t>(rank)));
}

class GemmAllReduceRun final : public bench::ProblemRun {
 public:
  GemmAllReduceRun(bench::RankContext& context, const overlap::GemmShape& shape)
      : context_(context),
        shape_(shape),
        a_(static_cast<std::size_t>(shape.m) * shape.k * 2),
        b_(static_cast<std::size_t>(shape.n) * shape.k * 2),
        partial_(static_cast<std::size_t>(shape.m) * shape.n * 2),
        reference_out_(partial_.bytes()),
        solution_out_(partial_.bytes()),
        overlap_(overlap::OverlapOp::kAllReduce, shape, core::DType::kBf16,
                 overlap::WeightLayout::kNK, context.comm, overlap::parse_plan(kPlan, "plan")) {}

  void make_inputs(std::uint64_t seed) override {
    seed_ = seed;
    const int rank = context_.comm.rank();
    core::fill_uniform(a_.data(), core::DType::kBf16,
                       static_cast<std::uint64_t>(shape_.m) * shape_.k, operand_seed(seed, rank, 0),
                       context_.stream);
    core::fill_uniform(b_.data(), core::DType::kBf16,
                       static_cast<std::uint64_t>(shape_.n) * shape_.k, operand_seed(seed, rank, 1),
                       context_.stream);
  }
  void poison_outputs() override {
    core::poison(reference_out_.data(), reference_out_.bytes(), context_.stream);
    core::poison(solution_out_.data(), solution_out_.bytes(), context_.stream);
  }
  void reference() override {
    cublas_.run(shape_.m, shape_.n, shape_.k, core::DType::kBf16, overlap::WeightLayout::kNK,
                a_.data(), b_.data(), partial_.data(), context_.stream);
    const comm::CollectiveCounts counts =
        comm::counts_for(comm::CollectiveOp::kAllReduce, partial_.bytes(), 2, context_.comm.size());
    comm::enqueue_collective(context_.comm, comm::CollectiveOp::kAllReduce, partial_.data(),
                             reference_out_.data(), counts, core::DType::kBf16, context_.stream);
  }
  void solution(int) override {
    overlap_.run({a_.data(), core::DType::kBf16, shape_.m, shape_.k},
                 {b_.data(), core::DType::kBf16, shape_.n, shape_.k},
                 {solution_out_.data(), core::DType::kBf16, shape_.m, shape_.n}, context_.stream);
  }
  std::string check_reference() override {
    // A few elements of the sum, rebuilt on the host from every rank's operands in double.
    const std::vector<float> out = download(reference_out_);
    const int world = context_.comm.size();
    const double scale = std::sqrt(static_cast<double>(shape_.k) * world / 3.0);
    for (const auto& [i, j] : std::vector<std::pair<int, int>>{
             {0, 0}, {1, shape_.n - 1}, {shape_.m / 2, shape_.n / 3}, {shape_.m - 1, 7}}) {
      double want = 0;
      for (int r = 0; r < world; ++r) {
        for (int k = 0; k < shape_.k; ++k) {
          const double a = core::round_to_bf16(core::uniform_value(
              operand_seed(seed_, r, 0), static_cast<std::uint64_t>(i) * shape_.k + k));
          const double b = core::round_to_bf16(core::uniform_value(
              operand_seed(seed_, r, 1), static_cast<std::uint64_t>(j) * shape_.k + k));
          want += a * b;
        }
      }
      const double got = out[static_cast<std::size_t>(i) * shape_.n + j];
      if (!(std::abs(got - want) <= 2e-2 * scale)) {
        return fmt::format("rank {}: reference C[{}][{}] is {}, the host's {}",
                           context_.comm.rank(), i, j, got, want);
      }
    }
    return "";
  }
  std::string compare() override {
    const std::vector<float> want = download(reference_out_), got = download(solution_out_);
    double max_diff = 0, max_ref = 0;
    for (std::size_t e = 0; e < want.size(); ++e) {
      if (!std::isfinite(got[e])) {
        return fmt::format("rank {}: element {} is not finite (unwritten)", context_.comm.rank(),
                           e);
      }
      max_diff = std::max(max_diff, static_cast<double>(std::abs(got[e] - want[e])));
      max_ref = std::max(max_ref, static_cast<double>(std::abs(want[e])));
    }
    if (max_diff > 1e-2 * max_ref) {
      return fmt::format("rank {}: max |difference| {} is above 1e-2 of max |reference| {}",
                         context_.comm.rank(), max_diff, max_ref);
    }
    return "";
  }

 private:
  std::vector<float> download(const core::DeviceBuffer& buffer) const {
    std::vector<std::uint16_t> raw(buffer.bytes() / 2);
    KILN_CUDA_CHECK(cudaMemcpy(raw.data(), buffer.data(), buffer.bytes(), cudaMemcpyDeviceToHost));
    std::vector<float> out(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i)
      out[i] = core::half_bits_to_float(raw[i], core::DType::kBf16);
    return out;
  }

  bench::RankContext& context_;
  overlap::GemmShape shape_;
  std::uint64_t seed_ = 0;
  core::DeviceBuffer a_, b_, partial_, reference_out_, solution_out_;
  bench::CublasGemm cublas_;
  overlap::GemmCollective overlap_;
};

class TpGemmAllReduce final : public bench::Problem {
 public:
  std::string name() const override { return "tp-gemm-allreduce"; }
  bench::Category category() const override { return bench::Category::kTensorParallel; }
  std::string description() const override {
    return "row-parallel linear: per-rank GEMM (M x N x K per GPU), partials summed over ranks";
  }
  std::vector<bench::ProblemSize> sizes() const override {
    const auto shape = [](const char* name, int m, int n, int k) {
      return bench::ProblemSize{name, {{"m", m}, {"n", n}, {"k", k}}};
    };
    return {shape("4096x8192x2048", 4096, 8192, 2048), shape("8192x8192x8192", 8192, 8192, 8192),
            shape("16384x8192x4096", 16384, 8192, 4096)};
  }
  std::vector<std::string> solutions() const override { return {"kiln-overlap"}; }
  roofline::CostModel cost(const bench::ProblemSize& size, core::DType, int world) const override {
    const double m = size.dim("m"), n = size.dim("n"), k = size.dim("k");
    return {{{"gemm",
              {{"matmul", 2 * m * n * k, roofline::Precision::kBf16Tensor,
                2 * (m * k + n * k + m * n), 0}}},
             {"allreduce",
              {{"sum", 0, roofline::Precision::kFp32, 4 * m * n,
                roofline::bus_bytes(comm::CollectiveOp::kAllReduce, 2 * m * n, world)}}}}};
  }
  std::unique_ptr<bench::ProblemRun> start(const bench::ProblemSize& size,
                                           bench::RankContext& context) const override {
    if (context.dtype != core::DType::kBf16) throw UsageError(name() + ": bf16 only (-d bf16)");
    const overlap::GemmShape shape{static_cast<int>(size.dim("m")), static_cast<int>(size.dim("n")),
                                   static_cast<int>(size.dim("k"))};
    return std::make_unique<GemmAllReduceRun>(context, shape);
  }
};

}  // namespace

std::unique_ptr<bench::Problem> make_tp_gemm_allreduce() {
  return std::make_unique<TpGemmAllReduce>();
}

}  // namespace kiln::problems
