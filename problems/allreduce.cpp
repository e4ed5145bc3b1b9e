// allreduce (sum): every rank ends with the element-wise sum of every rank's vector. Reference:
// ncclAllReduce. Solution "kiln-nvlink": NvlinkCollectives::all_reduce over peer memory: up to 1
// MiB in bf16/fp16 the flag-in-data push (Lamport), else one-shot (every rank reads every peer) or,
// from three ranks on and 1 MiB up, two-shot (reduce a segment each, then gather the segments).
#include "comm/all_reduce_choice.hpp"
#include "comm/collective.hpp"
#include "problems/peer_collective.hpp"
#include "problems/registry.hpp"
#include "roofline/bus_volume.hpp"

namespace kiln::problems {
namespace {

class AllReduceRun final : public PeerCollectiveRun {
 public:
  AllReduceRun(bench::RankContext& context, std::size_t bytes)
      : PeerCollectiveRun(context, bytes, bytes),
        counts_(comm::counts_for(comm::CollectiveOp::kAllReduce, bytes, element_,
                                 context.comm.size())) {
    nvlink_.reserve_two_shot();
    if (bytes <= comm::kLamportUpToBytes) nvlink_.reserve_lamport(bytes);
  }
  void reference() override {
    comm::enqueue_collective(context_.comm, comm::CollectiveOp::kAllReduce, nvlink_.send_buffer(),
                             reference_out_.data(), counts_, context_.dtype, context_.stream);
  }
  void solution(int) override {
    nvlink_.all_reduce(context_.dtype, counts_.total_count, solution_out_.data(), context_.stream);
  }
  std::string check_reference() override {
    const int world = context_.comm.size();
    return check_output([&](std::size_t e) { return sum_over_ranks(seed_, world, e); });
  }

 private:
  comm::CollectiveCounts counts_;
};

class AllReduce final : public bench::Problem {
 public:
  std::string name() const override { return "allreduce"; }
  bench::Category category() const override { return bench::Category::kCollective; }
  std::string description() const override { return "sum of every rank's bytes_per_rank vector"; }
  std::vector<bench::ProblemSize> sizes() const override { return per_rank_byte_sizes(); }
  std::vector<std::string> solutions() const override { return {"kiln-nvlink"}; }
  roofline::CostModel cost(const bench::ProblemSize& size, core::DType, int world) const override {
    const double b = static_cast<double>(size.dim("bytes_per_rank"));
    // Ring bus volume 2(W-1)/W*b; at least the input read and the output written locally.
    return {{{"allreduce",
              {{"reduce", 0, roofline::Precision::kFp32, 2 * b,
                roofline::bus_bytes(comm::CollectiveOp::kAllReduce, b, world)}}}}};
  }
  std::unique_ptr<bench::ProblemRun> start(const bench::ProblemSize& size,
                                           bench::RankContext& context) const override {
    const int world = context.comm.size();
    const std::size_t bytes = static_cast<std::size_t>(size.dim("bytes_per_rank"));
    require_whole_vectors(bytes, size, name(), world);
    return std::make_unique<AllReduceRun>(context, bytes);
  }
};

}  // namespace

std::unique_ptr<bench::Problem> make_allreduce() {
  return std::make_unique<AllReduce>();
}

}  // namespace kiln::problems
