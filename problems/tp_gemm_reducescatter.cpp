// tp-gemm-reducescatter (tensor + sequence parallel, row-parallel linear before a norm): each
// rank multiplies its activations A (M x K, its slice of the hidden dimension) by its weight shard
// B (N x K, C = A·Bᵀ); the partial products are summed over the ranks and each rank keeps a 1/W
// share of the rows. The share is block-cyclic (the overlap runtime's layout, slot_layout.hpp):
// rank j owns the rows r with (r % 128) / (128 / W) == j, in increasing order, as an M/W x N
// row-major matrix; a sequence-parallel norm after it needs only the rows' identities.
// Reference: cuBLAS GEMM, a strided copy (cudaMemcpy2DAsync) that makes each rank's rows
// contiguous, ncclReduceScatter. Solution "kiln-overlap": the overlap runtime's GemmReduceScatter
// (signaling GEMM, per-wave-group exchange, reduction fused into the reorder) with the tuner's
// plan. Solution "kiln-chunked": A's rows gathered by owner (the same strided copy as the
// reference's, on A instead of the product), then overlap::ChunkedReduceScatter (cuBLAS per
// destination chunk, copy engines, the owner's sum), whose chunk j is then rank j's rows in order;
// on 4xH200 the overlap bench chose it over the plan on 3-4 of 6 shapes
// (docs/results/2026-11-28b-h200-x4/).
#include <memory>

#include "comm/collective.hpp"
#include "overlap/chunked_reduce_scatter.hpp"
#include "overlap/cublas_gemm.hpp"
#include "overlap/gemm_collective.hpp"
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
constexpr int kRowPeriod = 128;  // the plan's tile height: the layout's period

overlap::Plan tuned_plan(comm::Communicator& comm, const overlap::GemmShape& shape) {
  overlap::Plan plan =
      tune::automatic_plan(comm, overlap::OverlapOp::kReduceScatter, shape, core::DType::kBf16)
          .plan;
  // The problem's row layout has the period of a 128-row tile: a tuned plan with taller tiles
  // gives way to the fixed one (the same on every rank: the plan is rank 0's).
  if (plan.gemm.tile.m != kRowPeriod)
    plan = overlap::parse_plan("tile=128x256 cap=128 comm=ce groups=each", "plan");
  return plan;
}

class GemmReduceScatterRun final : public TpGemmRun {
 public:
  GemmReduceScatterRun(bench::RankContext& context, const overlap::GemmShape& shape)
      : TpGemmRun(context, shape.m, shape.n, shape.k, shape.m, shape.m / context.comm.size()),
        partial_(static_cast<std::size_t>(shape.m) * shape.n * 2),
        by_owner_(partial_.bytes()),
        a_by_owner_(static_cast<std::size_t>(shape.m) * shape.k * 2),
        overlap_(overlap::OverlapOp::kReduceScatter, shape, core::DType::kBf16,
                 overlap::WeightLayout::kNK, context.comm, tuned_plan(context.comm, shape)),
        chunked_(context.comm, shape, core::DType::kBf16, overlap::WeightLayout::kNK,
                 overlap::current_device_sms()) {
    if (overlap_.geometry().tile_m != kRowPeriod || overlap_.output_rows() != out_rows_ ||
        chunked_.output_rows() != out_rows_) {
      throw Error("tp-gemm-reducescatter: a solution's layout is not the problem's");
    }
    ranks_summed_ = context.comm.size();
  }

  void reference() override {
    cublas_.run(m_, n_, k_, core::DType::kBf16, overlap::WeightLayout::kNK, a_ptr_, b_.data(),
                partial_.data(), context_.stream);
    gather_by_owner(partial_.data(), by_owner_.data(), n_);
    const comm::CollectiveCounts counts = comm::counts_for(
        comm::CollectiveOp::kReduceScatter, by_owner_.bytes(), 2, context_.comm.size());
    comm::enqueue_collective(context_.comm, comm::CollectiveOp::kReduceScatter, by_owner_.data(),
                             reference_out_.data(), counts, core::DType::kBf16, context_.stream);
  }
  void solution(int index) override {
    if (index == kChunked) {
      gather_by_owner(a_ptr_, a_by_owner_.data(), k_);
      chunked_.run(a_by_owner_.data(), b_.data(), solution_out_.data(), context_.stream);
      return;
    }
    overlap_.run({a_ptr_, core::DType::kBf16, m_, k_}, {b_.data(), core::DType::kBf16, n_, k_},
                 {solution_out_.data(), core::DType::kBf16, out_rows_, n_}, context_.stream);
  }
  std::string describe_solution(int index) const override {
    if (index == kChunked)
      return "A's rows gathered by owner, then cuBLAS per destination chunk + copy engines";
    return "plan " + overlap_.describe();
  }
  std::string check_reference() override {
    // Local row l is global row overlap_.global_row(l) of Σ_r A_r · B_rᵀ.
    const int world = context_.comm.size();
    return check_samples([&](int l, int j, double& terms) {
      terms = static_cast<double>(k_) * world;
      const int i = overlap_.global_row(l);
      double sum = 0;
      for (int r = 0; r < world; ++r) sum += host_dot(r, i, r, j);
      return sum;
    });
  }

  static constexpr int kChunked = 1;  // solutions(): {"kiln-overlap", "kiln-chunked"}

 private:
  // The rows of `from` (M rows of `columns` bf16) that rank j owns, (128 / W)-row runs every 128
  // rows starting at row j * 128 / W, into row block j of `to` (M / W rows), in order.
  void gather_by_owner(const void* from, void* to, int columns) {
    const int world = context_.comm.size();
    const std::size_t row_bytes = static_cast<std::size_t>(columns) * 2;
    const std::size_t run_bytes = row_bytes * (kRowPeriod / world);
    for (int j = 0; j < world; ++j) {
      KILN_CUDA_CHECK(cudaMemcpy2DAsync(static_cast<char*>(to) + j * row_bytes * out_rows_,
                                        run_bytes, static_cast<const char*>(from) + j * run_bytes,
                                        row_bytes * kRowPeriod, run_bytes, m_ / kRowPeriod,
                                        cudaMemcpyDeviceToDevice, context_.stream));
    }
  }

  core::DeviceBuffer partial_, by_owner_, a_by_owner_;
  overlap::CublasGemm cublas_;
  overlap::GemmCollective overlap_;
  overlap::ChunkedReduceScatter chunked_;
};

class TpGemmReduceScatter final : public bench::Problem {
 public:
  std::string name() const override { return "tp-gemm-reducescatter"; }
  bench::Category category() const override { return bench::Category::kTensorParallel; }
  std::string description() const override {
    return "row-parallel linear into sequence parallel: per-rank GEMM (M x N x K per GPU), "
           "partials summed and the rows scattered (block-cyclic, period 128)";
  }
  std::vector<bench::ProblemSize> sizes() const override { return tp_gemm_sizes(); }
  std::vector<std::string> solutions() const override { return {"kiln-overlap", "kiln-chunked"}; }
  roofline::CostModel cost(const bench::ProblemSize& size, core::DType, int world) const override {
    const double m = size.dim("m"), n = size.dim("n"), k = size.dim("k");
    // One phase: finished tiles are reduce-scattered while the GEMM goes on (see
    // tp-gemm-allreduce). HBM: the GEMM's operands and output, then the partial read and the
    // share written.
    return {{{"gemm+reducescatter",
              {{"matmul", 2 * m * n * k, roofline::Precision::kBf16Tensor,
                2 * (m * k + n * k + m * n), 0},
               {"sum", 0, roofline::Precision::kFp32, 2 * m * n + 2 * m * n / world,
                roofline::bus_bytes(comm::CollectiveOp::kReduceScatter, 2 * m * n, world)}}}}};
  }
  std::unique_ptr<bench::ProblemRun> start(const bench::ProblemSize& size,
                                           bench::RankContext& context) const override {
    if (context.dtype != core::DType::kBf16) throw UsageError(name() + ": bf16 only (-d bf16)");
    const int world = context.comm.size();
    const overlap::GemmShape shape{static_cast<int>(size.dim("m")), static_cast<int>(size.dim("n")),
                                   static_cast<int>(size.dim("k"))};
    if (kRowPeriod % world != 0 || shape.m % kRowPeriod != 0) {
      throw UsageError(fmt::format("{} {} on {} ranks: M must be a multiple of {} and {} of W",
                                   name(), size.name, world, kRowPeriod, kRowPeriod));
    }
    return std::make_unique<GemmReduceScatterRun>(context, shape);
  }
};

}  // namespace

std::unique_ptr<bench::Problem> make_tp_gemm_reducescatter() {
  return std::make_unique<TpGemmReduceScatter>();
}

}  // namespace kiln::problems
