// reducescatter (sum): rank r ends with block r of the element-wise sum of every rank's vector.
// Reference: ncclReduceScatter. Solution "kiln-nvlink": pull-and-sum of the rank's block.
#include "comm/collective.hpp"
#include "problems/peer_collective.hpp"
#include "problems/registry.hpp"
#include "roofline/bus_volume.hpp"

namespace kiln::problems {
namespace {

class ReduceScatterRun final : public PeerCollectiveRun {
 public:
  // `bytes`: each rank's whole input vector.
  ReduceScatterRun(bench::RankContext& context, std::size_t bytes)
      : PeerCollectiveRun(context, bytes, bytes / context.comm.size()),
        counts_(comm::counts_for(comm::CollectiveOp::kReduceScatter, bytes, element_,
                                 context.comm.size())) {}
  void reference() override {
    comm::enqueue_collective(context_.comm, comm::CollectiveOp::kReduceScatter,
                             nvlink_.send_buffer(), reference_out_.data(), counts_, context_.dtype,
                             context_.stream);
  }
  void solution(int) override {
    nvlink_.reduce_scatter(context_.dtype, counts_.block_count, solution_out_.data(),
                           context_.stream);
  }
  std::string check_reference() override {
    const int world = context_.comm.size();
    const std::size_t first = context_.comm.rank() * counts_.block_count;
    return check_output([&](std::size_t e) { return sum_over_ranks(seed_, world, first + e); });
  }

 private:
  comm::CollectiveCounts counts_;
};

class ReduceScatter final : public bench::Problem {
 public:
  std::string name() const override { return "reducescatter"; }
  bench::Category category() const override { return bench::Category::kCollective; }
  std::string description() const override {
    return "block r of the sum of every rank's bytes_per_rank vector to rank r";
  }
  std::vector<bench::ProblemSize> sizes() const override { return per_rank_byte_sizes(); }
  std::vector<std::string> solutions() const override { return {"kiln-nvlink"}; }
  roofline::CostModel cost(const bench::ProblemSize& size, core::DType, int world) const override {
    const double b = static_cast<double>(size.dim("bytes_per_rank"));
    // (W-1)/W*b over the links; the input read once and the block written.
    return {{{"reducescatter",
              {{"reduce", 0, roofline::Precision::kFp32, b + b / world,
                roofline::bus_bytes(comm::CollectiveOp::kReduceScatter, b, world)}}}}};
  }
  std::unique_ptr<bench::ProblemRun> start(const bench::ProblemSize& size,
                                           bench::RankContext& context) const override {
    const int world = context.comm.size();
    const std::size_t bytes = static_cast<std::size_t>(size.dim("bytes_per_rank"));
    require_whole_blocks(bytes, core::dtype_size(context.dtype), world, size, name());
    return std::make_unique<ReduceScatterRun>(context, bytes);
  }
};

}  // namespace

std::unique_ptr<bench::Problem> make_reducescatter() {
  return std::make_unique<ReduceScatter>();
}

}  // namespace kiln::problems
