// alltoall: rank r's block j goes to rank j's block r. Reference: NCCL (grouped send/recv, as
// kiln's collective bench runs it). Solution "kiln-nvlink": one pull kernel over peer memory.
#include "comm/collective.hpp"
#include "problems/peer_collective.hpp"
#include "problems/registry.hpp"
#include "roofline/bus_volume.hpp"

namespace kiln::problems {
namespace {

class AllToAllRun final : public PeerCollectiveRun {
 public:
  // `bytes`: what each rank sends in all (world blocks).
  AllToAllRun(bench::RankContext& context, std::size_t bytes)
      : PeerCollectiveRun(context, bytes, bytes),
        counts_(comm::counts_for(comm::CollectiveOp::kAllToAll, bytes, element_,
                                 context.comm.size())) {}

  void reference() override {
    comm::enqueue_collective(context_.comm, comm::CollectiveOp::kAllToAll, nvlink_.send_buffer(),
                             reference_out_.data(), counts_, context_.dtype, context_.stream);
  }
  void solution(int) override {
    nvlink_.all_to_all(counts_.block_count * element_, solution_out_.data(), context_.stream);
  }
  std::string check_reference() override {
    const std::size_t block = counts_.block_count;
    const int me = context_.comm.rank();
    return check_output([&](std::size_t e) {
      const int source = static_cast<int>(e / block);
      return core::test_value(seed_, source, me * block + e % block);
    });
  }

 private:
  comm::CollectiveCounts counts_;
};

class AllToAll final : public bench::Problem {
 public:
  std::string name() const override { return "alltoall"; }
  bench::Category category() const override { return bench::Category::kCollective; }
  std::string description() const override {
    return "each rank sends block j of its bytes_per_rank to rank j";
  }
  std::vector<bench::ProblemSize> sizes() const override { return per_rank_byte_sizes(); }
  std::vector<std::string> solutions() const override { return {"kiln-nvlink"}; }
  roofline::CostModel cost(const bench::ProblemSize& size, core::DType, int world) const override {
    const double b = static_cast<double>(size.dim("bytes_per_rank"));
    // (W-1)/W of each rank's b bytes leave it and as much arrives; b read and b written locally
    // (counting the peers' reads of this GPU's memory).
    return {{{"alltoall",
              {{"exchange", 0, roofline::Precision::kFp32, 2 * b,
                roofline::bus_bytes(comm::CollectiveOp::kAllToAll, b, world)}}}}};
  }
  std::unique_ptr<bench::ProblemRun> start(const bench::ProblemSize& size,
                                           bench::RankContext& context) const override {
    const int world = context.comm.size();
    const std::size_t bytes = static_cast<std::size_t>(size.dim("bytes_per_rank"));
    require_whole_blocks(bytes, core::dtype_size(context.dtype), world, size, name());
    return std::make_unique<AllToAllRun>(context, bytes);
  }
};

}  // namespace

std::unique_ptr<bench::Problem> make_alltoall() {
  return std::make_unique<AllToAll>();
}

}  // namespace kiln::problems
