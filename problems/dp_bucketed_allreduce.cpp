// dp-bucketed-allreduce (data parallel): a rank's gradients (total_bytes) are summed across
// ranks bucket by bucket, as DDP does, with buckets of uneven sizes. Reference: one
// ncclAllReduce per bucket, back to back on one stream. Solution "kiln-nvlink-fused": the buckets
// are contiguous, so one one-shot pull-and-sum covers them all (one launch, one barrier).
#include <algorithm>

#include "comm/collective.hpp"
#include "problems/peer_collective.hpp"
#include "problems/registry.hpp"
#include "roofline/bus_volume.hpp"

namespace kiln::problems {
namespace {

// Bucket sizes in bytes: weights 1, 2, 3, 4, 1, 2, ... scaled to total, each a multiple of 16
// bytes, the last one taking the remainder.
std::vector<std::size_t> bucket_bytes(std::size_t total, int buckets) {
  std::vector<std::size_t> sizes;
  double weight_sum = 0;
  for (int b = 0; b < buckets; ++b) weight_sum += 1 + b % 4;
  std::size_t used = 0;
  for (int b = 0; b + 1 < buckets; ++b) {
    const std::size_t bytes =
        static_cast<std::size_t>(total * ((1 + b % 4) / weight_sum)) / 16 * 16;
    sizes.push_back(bytes);
    used += bytes;
  }
  sizes.push_back(total - used);
  return sizes;
}

class BucketedRun final : public PeerCollectiveRun {
 public:
  BucketedRun(bench::RankContext& context, std::size_t total, int buckets)
      : PeerCollectiveRun(context, total, total), buckets_(bucket_bytes(total, buckets)) {
    nvlink_.reserve_two_shot();  // the fused all-reduce goes two-shot where that pays
  }

  void reference() override {
    std::size_t offset = 0;
    for (const std::size_t bytes : buckets_) {
      const comm::CollectiveCounts counts =
          comm::counts_for(comm::CollectiveOp::kAllReduce, bytes, element_, context_.comm.size());
      comm::enqueue_collective(context_.comm, comm::CollectiveOp::kAllReduce,
                               static_cast<char*>(nvlink_.send_buffer()) + offset,
                               static_cast<char*>(reference_out_.data()) + offset, counts,
                               context_.dtype, context_.stream);
      offset += bytes;
    }
  }
  void solution(int) override {
    nvlink_.all_reduce(context_.dtype, send_bytes_ / element_, solution_out_.data(),
                       context_.stream);
  }
  std::string check_reference() override {
    const int world = context_.comm.size();
    return check_output([&](std::size_t e) { return sum_over_ranks(seed_, world, e); });
  }

 private:
  std::vector<std::size_t> buckets_;
};

class BucketedAllReduce final : public bench::Problem {
 public:
  std::string name() const override { return "dp-bucketed-allreduce"; }
  bench::Category category() const override { return bench::Category::kDataParallel; }
  std::string description() const override {
    return "gradients of total_bytes summed across ranks in `buckets` uneven buckets";
  }
  std::vector<bench::ProblemSize> sizes() const override {
    return {{"4M/16", {{"total_bytes", 4 << 20}, {"buckets", 16}}},
            {"32M/32", {{"total_bytes", 32 << 20}, {"buckets", 32}}},
            {"128M/64", {{"total_bytes", 128 << 20}, {"buckets", 64}}}};
  }
  std::vector<std::string> solutions() const override { return {"kiln-nvlink-fused"}; }
  roofline::CostModel cost(const bench::ProblemSize& size, core::DType, int world) const override {
    const double b = static_cast<double>(size.dim("total_bytes"));
    // However bucketed, the data is one all-reduce's worth: the ring's bus volume.
    return {{{"allreduce",
              {{"reduce", 0, roofline::Precision::kFp32, 2 * b,
                roofline::bus_bytes(comm::CollectiveOp::kAllReduce, b, world)}}}}};
  }
  std::unique_ptr<bench::ProblemRun> start(const bench::ProblemSize& size,
                                           bench::RankContext& context) const override {
    const int world = context.comm.size();
    const std::size_t total = static_cast<std::size_t>(size.dim("total_bytes"));
    const int buckets = static_cast<int>(size.dim("buckets"));
    const std::size_t element = core::dtype_size(context.dtype);
    // Every bucket must split into whole elements per rank for NCCL, and the fused sum needs
    // whole 16-byte vectors.
    require_whole_vectors(total, size, name(), world);
    for (const std::size_t bytes : bucket_bytes(total, buckets)) {
      if (bytes % (element * world) != 0 || bytes == 0) {
        throw UsageError(name() + " " + size.name + ": a bucket of " + std::to_string(bytes) +
                         " bytes does not split over " + std::to_string(world) + " ranks");
      }
    }
    return std::make_unique<BucketedRun>(context, total, buckets);
  }
};

}  // namespace

std::unique_ptr<bench::Problem> make_dp_bucketed_allreduce() {
  return std::make_unique<BucketedAllReduce>();
}

}  // namespace kiln::problems
