// tp-gemm-allreduce (tensor parallel, row-parallel linear): each rank multiplies its activations
// A (M x K, the rank's slice of the hidden dimension) by its weight shard B (N x K, C = A·Bᵀ) and
// the partial products are summed over the ranks; every rank ends with the M x N sum (bf16).
// Reference: cuBLAS GEMM, then ncclAllReduce. Solution "kiln-overlap": the overlap runtime
// (src/overlap: signaling GEMM, per-wave-group copy-engine exchange, reduction fused into the
// reorder) with the tuner's plan for the device, world size and shape.
#include <cmath>
#include <cstring>
#include <memory>

#include "comm/collective.hpp"
#include "overlap/cublas_gemm.hpp"
#include "overlap/gemm_collective.hpp"
#include "problems/peer_collective.hpp"
#include "problems/registry.hpp"
#include "problems/tp_gemm_common.hpp"
#include "roofline/bus_volume.hpp"
#include "tune/automatic_plan.hpp"

namespace kiln::problems {
namespace {

// The tuner's plan for this device, world size, shape (tune::automatic_plan: the plan cache, else
// the saved or built-in profile's prediction, the serial plan included, else the nearest tuned
// shape, else the default), rank 0's and broadcast. A fixed plan that did well on 2xH200 (copy
// engines, one group per wave) ran 0.37x NCCL at 4 ranks (4xH200, 2026-11-27).
overlap::Plan tuned_plan(comm::Communicator& comm, const overlap::GemmShape& shape) {
  return tune::automatic_plan(comm, overlap::OverlapOp::kAllReduce, shape, core::DType::kBf16).plan;
}

class GemmAllReduceRun final : public TpGemmRun {
 public:
  GemmAllReduceRun(bench::RankContext& context, const overlap::GemmShape& shape)
      : TpGemmRun(context, shape.m, shape.n, shape.k, shape.m, shape.m),
        partial_(static_cast<std::size_t>(shape.m) * shape.n * 2),
        overlap_(overlap::OverlapOp::kAllReduce, shape, core::DType::kBf16,
                 overlap::WeightLayout::kNK, context.comm, tuned_plan(context.comm, shape)) {
    ranks_summed_ = context.comm.size();
  }

  void reference() override {
    cublas_.run(m_, n_, k_, core::DType::kBf16, overlap::WeightLayout::kNK, a_ptr_, b_.data(),
                partial_.data(), context_.stream);
    const comm::CollectiveCounts counts =
        comm::counts_for(comm::CollectiveOp::kAllReduce, partial_.bytes(), 2, context_.comm.size());
    comm::enqueue_collective(context_.comm, comm::CollectiveOp::kAllReduce, partial_.data(),
                             reference_out_.data(), counts, core::DType::kBf16, context_.stream);
  }
  void solution(int) override {
    overlap_.run({a_ptr_, core::DType::kBf16, m_, k_}, {b_.data(), core::DType::kBf16, n_, k_},
                 {solution_out_.data(), core::DType::kBf16, m_, n_}, context_.stream);
  }
  std::string describe_solution(int) const override { return "plan " + overlap_.describe(); }
  std::string check_reference() override {
    // C[i][j] = Σ_r (A_r · B_rᵀ)[i][j], every rank's operands rebuilt on the host.
    const int world = context_.comm.size();
    return check_samples([&](int i, int j, double& terms) {
      terms = static_cast<double>(k_) * world;
      double sum = 0;
      for (int r = 0; r < world; ++r) sum += host_dot(r, i, r, j);
      return sum;
    });
  }

 private:
  core::DeviceBuffer partial_;
  overlap::CublasGemm cublas_;
  overlap::GemmCollective overlap_;
};

class TpGemmAllReduce final : public bench::Problem {
 public:
  std::string name() const override { return "tp-gemm-allreduce"; }
  bench::Category category() const override { return bench::Category::kTensorParallel; }
  std::string description() const override {
    return "row-parallel linear: per-rank GEMM (M x N x K per GPU), partials summed over ranks";
  }
  std::vector<bench::ProblemSize> sizes() const override { return tp_gemm_sizes(); }
  std::vector<std::string> solutions() const override { return {"kiln-overlap"}; }
  roofline::CostModel cost(const bench::ProblemSize& size, core::DType, int world) const override {
    const double m = size.dim("m"), n = size.dim("n"), k = size.dim("k");
    // One phase: the all-reduce of finished tiles can run while the rest of the GEMM computes,
    // so the bound is the busiest resource over both (a sum of two phases would not bound an
    // overlapped solution).
    return {{{"gemm+allreduce",
              {{"matmul", 2 * m * n * k, roofline::Precision::kBf16Tensor,
                2 * (m * k + n * k + m * n), 0},
               {"sum", 0, roofline::Precision::kFp32, 4 * m * n,
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
