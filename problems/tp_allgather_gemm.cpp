// tp-allgather-gemm (sequence parallel into a column-parallel linear): rank r holds rows
// r*M/W .. (r+1)*M/W - 1 of the activations A (M x K, bf16) and its weight shard B (N x K); every
// rank needs C = A·Bᵀ over all M rows (M x N), so A is all-gathered first.
// Reference: ncclAllGather of A, then one cuBLAS GEMM. Solution "kiln-ce-overlap" (decomposition,
// as async tensor parallelism does it; the signaling runtime covers the GEMM-then-collective
// direction only): the GEMM of the local rows starts at once while copy engines pull the peers'
// rows from peer memory, one cudaMemcpyAsync per peer on a side stream after one device
// barrier; the GEMM of each peer's rows waits only for that peer's copy. No SM does the copies.
#include <memory>
#include <vector>

#include "comm/collective.hpp"
#include "comm/nvlink_collectives.hpp"
#include "core/stream.hpp"
#include "overlap/cublas_gemm.hpp"
#include "problems/registry.hpp"
#include "problems/tp_gemm_common.hpp"
#include "roofline/bus_volume.hpp"

namespace kiln::problems {
namespace {

class AllGatherGemmRun final : public TpGemmRun {
 public:
  AllGatherGemmRun(bench::RankContext& context, int m, int n, int k)
      : TpGemmRun(context, m, n, k, m / context.comm.size(), m, /*allocate_a=*/false),
        rows_(m / context.comm.size()),
        shard_bytes_(static_cast<std::size_t>(rows_) * k * 2),
        nvlink_(context.comm, shard_bytes_),
        gathered_(static_cast<std::size_t>(m) * k * 2) {
    a_ptr_ = nvlink_.send_buffer();
    for (int r = 0; r < context.comm.size(); ++r) chunk_ready_.emplace_back(cudaEventDisableTiming);
  }

  void reference() override {
    const comm::CollectiveCounts counts = comm::counts_for(
        comm::CollectiveOp::kAllGather, gathered_.bytes(), 2, context_.comm.size());
    comm::enqueue_collective(context_.comm, comm::CollectiveOp::kAllGather, a_ptr_,
                             gathered_.data(), counts, core::DType::kBf16, context_.stream);
    cublas_.run(m_, n_, k_, core::DType::kBf16, overlap::WeightLayout::kNK, gathered_.data(),
                b_.data(), reference_out_.data(), context_.stream);
  }
  void solution(int) override {
    const int world = context_.comm.size(), rank = context_.comm.rank();
    cudaStream_t stream = context_.stream, side = copy_stream_.get();
    // The side stream starts after everything before this call on the main stream (this rank's
    // inputs, the previous call's GEMMs that read `gathered_`); the barrier waits for the peers'.
    start_.record(stream);
    KILN_CUDA_CHECK(cudaStreamWaitEvent(side, start_.get(), 0));
    nvlink_.barrier(side);
    for (int step = 1; step < world; ++step) {
      const int peer = (rank + step) % world;
      KILN_CUDA_CHECK(cudaMemcpyAsync(chunk(peer), nvlink_.send_peers()[peer], shard_bytes_,
                                      cudaMemcpyDeviceToDevice, side));
      chunk_ready_[peer].record(side);
    }
    gemm_rows(a_ptr_, rank);
    for (int step = 1; step < world; ++step) {
      const int peer = (rank + step) % world;
      KILN_CUDA_CHECK(cudaStreamWaitEvent(stream, chunk_ready_[peer].get(), 0));
      gemm_rows(chunk(peer), peer);
    }
  }
  std::string check_reference() override {
    // C[i][j] = A_owner(i)[i % rows] · B_me[j], the owner's rows rebuilt on the host.
    const int me = context_.comm.rank();
    return check_samples([&](int i, int j, double& terms) {
      terms = k_;
      return host_dot(i / rows_, i % rows_, me, j);
    });
  }

 private:
  char* chunk(int source) {
    return static_cast<char*>(gathered_.data()) + static_cast<std::size_t>(source) * shard_bytes_;
  }
  // C rows of `source`'s shard = shard · Bᵀ.
  void gemm_rows(const void* shard, int source) {
    cublas_.run(rows_, n_, k_, core::DType::kBf16, overlap::WeightLayout::kNK, shard, b_.data(),
                static_cast<char*>(solution_out_.data()) +
                    static_cast<std::size_t>(source) * rows_ * n_ * 2,
                context_.stream);
  }

  int rows_;
  std::size_t shard_bytes_;
  comm::NvlinkCollectives nvlink_;  // this rank's A shard, peer-visible, and the barrier
  core::DeviceBuffer gathered_;
  overlap::CublasGemm cublas_;
  core::Stream copy_stream_;
  core::Event start_{cudaEventDisableTiming};
  std::vector<core::Event> chunk_ready_;
};

class TpAllGatherGemm final : public bench::Problem {
 public:
  std::string name() const override { return "tp-allgather-gemm"; }
  bench::Category category() const override { return bench::Category::kTensorParallel; }
  std::string description() const override {
    return "column-parallel linear after sequence parallel: all-gather A's rows, then a per-rank "
           "GEMM (M x N x K per GPU, N this rank's columns)";
  }
  std::vector<bench::ProblemSize> sizes() const override { return tp_gemm_sizes(); }
  std::vector<std::string> solutions() const override { return {"kiln-ce-overlap"}; }
  roofline::CostModel cost(const bench::ProblemSize& size, core::DType, int world) const override {
    const double m = size.dim("m"), n = size.dim("n"), k = size.dim("k");
    // One phase: the peers' rows arrive while the local rows are multiplied. HBM: the gathered
    // rows written once and read by the GEMM with B and C.
    return {{{"allgather+gemm",
              {{"gather", 0, roofline::Precision::kFp32, 2 * m * k,
                roofline::bus_bytes(comm::CollectiveOp::kAllGather, 2 * m * k, world)},
               {"matmul", 2 * m * n * k, roofline::Precision::kBf16Tensor,
                2 * (m * k + n * k + m * n), 0}}}}};
  }
  std::unique_ptr<bench::ProblemRun> start(const bench::ProblemSize& size,
                                           bench::RankContext& context) const override {
    if (context.dtype != core::DType::kBf16) throw UsageError(name() + ": bf16 only (-d bf16)");
    const int world = context.comm.size();
    const int m = static_cast<int>(size.dim("m"));
    if (m % world != 0) {
      throw UsageError(
          fmt::format("{} {} on {} ranks: M {} must split evenly", name(), size.name, world, m));
    }
    return std::make_unique<AllGatherGemmRun>(context, m, static_cast<int>(size.dim("n")),
                                              static_cast<int>(size.dim("k")));
  }
};

}  // namespace

std::unique_ptr<bench::Problem> make_tp_allgather_gemm() {
  return std::make_unique<TpAllGatherGemm>();
}

}  // namespace kiln::problems
