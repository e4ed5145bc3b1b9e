// allgather: every rank ends with every rank's block, in rank order. Reference: ncclAllGather.
// Solution "kiln-nvlink": one pull kernel over peer memory (comm/nvlink_collectives).
#include <nccl.h>

#include "comm/nccl_check.hpp"
#include "problems/peer_collective.hpp"
#include "problems/registry.hpp"
#include "roofline/bus_volume.hpp"

namespace kiln::problems {
namespace {

class AllGatherRun final : public PeerCollectiveRun {
 public:
  AllGatherRun(bench::RankContext& context, std::size_t bytes)
      : PeerCollectiveRun(context, bytes, bytes * context.comm.size()) {}

  void reference() override {
    comm::Communicator& c = context_.comm;
    c.call("allgather reference", [&] {
      return ncclAllGather(nvlink_.send_buffer(), reference_out_.data(), send_bytes_, ncclChar,
                           c.get(), context_.stream);
    });
  }
  void solution(int) override {
    nvlink_.all_gather(send_bytes_, solution_out_.data(), context_.stream);
  }
  std::string check_reference() override {
    const std::size_t per_rank = send_bytes_ / element_;
    return check_output([&](std::size_t e) {
      return core::test_value(seed_, static_cast<int>(e / per_rank), e % per_rank);
    });
  }
};

class AllGather final : public bench::Problem {
 public:
  std::string name() const override { return "allgather"; }
  bench::Category category() const override { return bench::Category::kCollective; }
  std::string description() const override {
    return "every rank's block to every rank (bytes_per_rank each)";
  }
  std::vector<bench::ProblemSize> sizes() const override { return per_rank_byte_sizes(); }
  std::vector<std::string> solutions() const override { return {"kiln-nvlink"}; }
  roofline::CostModel cost(const bench::ProblemSize& size, core::DType, int world) const override {
    const double b = static_cast<double>(size.dim("bytes_per_rank"));
    // (W-1)/W of the gathered W*b bytes cross each GPU's links; every output byte is read from
    // some GPU's memory and written to this one's: 2*W*b of HBM traffic per GPU.
    return {{{"allgather",
              {{"gather", 0, roofline::Precision::kFp32, 2 * world * b,
                roofline::bus_bytes(comm::CollectiveOp::kAllGather, world * b, world)}}}}};
  }
  std::unique_ptr<bench::ProblemRun> start(const bench::ProblemSize& size,
                                           bench::RankContext& context) const override {
    const int world = context.comm.size();
    const std::size_t bytes = static_cast<std::size_t>(size.dim("bytes_per_rank"));
    require_whole_vectors(bytes, size, name(), world);
    return std::make_unique<AllGatherRun>(context, bytes);
  }
};

}  // namespace

std::unique_ptr<bench::Problem> make_allgather() {
  return std::make_unique<AllGather>();
}

}  // namespace kiln::problems
