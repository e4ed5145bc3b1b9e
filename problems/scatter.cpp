// scatter: block r of rank 0's vector to rank r. Reference: NCCL grouped send/recv from rank 0
// (NCCL has no scatter call) plus the root's local copy. Solution "kiln-nvlink": each rank pulls
// its block from rank 0's send buffer over peer memory.
#include <nccl.h>

#include "comm/collective.hpp"
#include "comm/nccl_check.hpp"
#include "problems/peer_collective.hpp"
#include "problems/registry.hpp"

namespace kiln::problems {
namespace {

class ScatterRun final : public PeerCollectiveRun {
 public:
  // `bytes`: the root's whole vector; each rank receives bytes / world.
  ScatterRun(bench::RankContext& context, std::size_t bytes)
      : PeerCollectiveRun(context, bytes, bytes / context.comm.size()) {}
  void reference() override {
    comm::Communicator& c = context_.comm;
    const int me = c.rank(), root = comm::kRootRank;
    const char* send = static_cast<const char*>(nvlink_.send_buffer());
    c.call("scatter reference", [&] {
      ncclResult_t result = ncclGroupStart();
      if (result != ncclSuccess) return result;
      if (me == root) {
        for (int r = 0; r < c.size(); ++r) {
          if (r == root) continue;
          result =
              ncclSend(send + r * recv_bytes_, recv_bytes_, ncclChar, r, c.get(), context_.stream);
          if (result != ncclSuccess) return result;
        }
      } else {
        result =
            ncclRecv(reference_out_.data(), recv_bytes_, ncclChar, root, c.get(), context_.stream);
        if (result != ncclSuccess) return result;
      }
      return ncclGroupEnd();
    });
    if (me == root) {
      KILN_CUDA_CHECK(cudaMemcpyAsync(reference_out_.data(), send + root * recv_bytes_, recv_bytes_,
                                      cudaMemcpyDeviceToDevice, context_.stream));
    }
  }
  void solution(int) override {
    nvlink_.scatter(recv_bytes_, comm::kRootRank, solution_out_.data(), context_.stream);
  }
  std::string check_reference() override {
    const std::size_t first = context_.comm.rank() * (recv_bytes_ / element_);
    return check_output(
        [&](std::size_t e) { return core::test_value(seed_, comm::kRootRank, first + e); });
  }
};

class Scatter final : public bench::Problem {
 public:
  std::string name() const override { return "scatter"; }
  bench::Category category() const override { return bench::Category::kCollective; }
  std::string description() const override {
    return "block r of rank 0's bytes_per_rank vector to rank r";
  }
  std::vector<bench::ProblemSize> sizes() const override { return per_rank_byte_sizes(); }
  std::vector<std::string> solutions() const override { return {"kiln-nvlink"}; }
  roofline::CostModel cost(const bench::ProblemSize& size, core::DType, int world) const override {
    const double b = static_cast<double>(size.dim("bytes_per_rank"));
    // The root sends (W-1)/W of its b bytes out over its links and reads them: the root binds.
    return {{{"scatter", {{"copy", 0, roofline::Precision::kFp32, b, (world - 1.0) / world * b}}}}};
  }
  std::unique_ptr<bench::ProblemRun> start(const bench::ProblemSize& size,
                                           bench::RankContext& context) const override {
    const int world = context.comm.size();
    const std::size_t bytes = static_cast<std::size_t>(size.dim("bytes_per_rank"));
    require_whole_vectors(bytes / world, size, name(), world);
    return std::make_unique<ScatterRun>(context, bytes);
  }
};

}  // namespace

std::unique_ptr<bench::Problem> make_scatter() {
  return std::make_unique<Scatter>();
}

}  // namespace kiln::problems
