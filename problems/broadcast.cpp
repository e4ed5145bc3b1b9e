// broadcast: rank 0's vector to every rank. Reference: ncclBroadcast. Solution "kiln-nvlink":
// every rank pulls rank 0's send buffer over peer memory.
#include "comm/collective.hpp"
#include "problems/peer_collective.hpp"
#include "problems/registry.hpp"
#include "roofline/bus_volume.hpp"

namespace kiln::problems {
namespace {

class BroadcastRun final : public PeerCollectiveRun {
 public:
  BroadcastRun(bench::RankContext& context, std::size_t bytes)
      : PeerCollectiveRun(context, bytes, bytes),
        counts_(comm::counts_for(comm::CollectiveOp::kBroadcast, bytes, element_,
                                 context.comm.size())) {
    nvlink_.reserve_two_shot();  // a scatter and an all-gather from three ranks and 1 MiB up
  }
  void reference() override {
    comm::enqueue_collective(context_.comm, comm::CollectiveOp::kBroadcast, nvlink_.send_buffer(),
                             reference_out_.data(), counts_, context_.dtype, context_.stream);
  }
  void solution(int) override {
    nvlink_.broadcast(send_bytes_, comm::kRootRank, solution_out_.data(), context_.stream);
  }
  std::string check_reference() override {
    return check_output([&](std::size_t e) { return core::test_value(seed_, comm::kRootRank, e); });
  }

 private:
  comm::CollectiveCounts counts_;
};

class Broadcast final : public bench::Problem {
 public:
  std::string name() const override { return "broadcast"; }
  bench::Category category() const override { return bench::Category::kCollective; }
  std::string description() const override { return "rank 0's bytes_per_rank vector to all"; }
  std::vector<bench::ProblemSize> sizes() const override { return per_rank_byte_sizes(); }
  std::vector<std::string> solutions() const override { return {"kiln-nvlink"}; }
  roofline::CostModel cost(const bench::ProblemSize& size, core::DType, int world) const override {
    const double b = static_cast<double>(size.dim("bytes_per_rank"));
    // b arrives at every non-root GPU; b written there, b read at the root.
    return {{{"broadcast",
              {{"copy", 0, roofline::Precision::kFp32, b,
                roofline::bus_bytes(comm::CollectiveOp::kBroadcast, b, world)}}}}};
  }
  std::unique_ptr<bench::ProblemRun> start(const bench::ProblemSize& size,
                                           bench::RankContext& context) const override {
    const int world = context.comm.size();
    const std::size_t bytes = static_cast<std::size_t>(size.dim("bytes_per_rank"));
    require_whole_vectors(bytes, size, name(), world);
    return std::make_unique<BroadcastRun>(context, bytes);
  }
};

}  // namespace

std::unique_ptr<bench::Problem> make_broadcast() {
  return std::make_unique<Broadcast>();
}

}  // namespace kiln::problems
