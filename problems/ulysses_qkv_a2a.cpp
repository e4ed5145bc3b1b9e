// ulysses-qkv-a2a (sequence parallel, DeepSpeed-Ulysses): before attention, every rank trades its
// sequence shard of all heads for the whole sequence of its head group. Rank r's input is packed
// QKV [S/W][3][heads][head_dim]; its output is [S][3][heads/W][head_dim] (positions in order, the
// Q, K and V of heads r*heads/W .. (r+1)*heads/W - 1). Reference: a plain pack kernel (block d of
// the send buffer = what rank d gets), then NCCL all-to-all. Solution "kiln-nvlink": one kernel
// pulls every output vector straight from the owner's input over peer memory: the pack is fused
// into the exchange and no NCCL kernel runs.
#include <memory>

#include "comm/collective.hpp"
#include "problems/peer_collective.hpp"
#include "problems/registry.hpp"
#include "problems/ulysses_a2a_kernels.hpp"
#include "roofline/bus_volume.hpp"

namespace kiln::problems {
namespace {

class UlyssesRun final : public PeerCollectiveRun {
 public:
  UlyssesRun(bench::RankContext& context, const UlyssesShape& shape, int head_dim)
      : PeerCollectiveRun(context, bytes_of(shape), bytes_of(shape)),
        shape_(shape),
        head_dim_(head_dim),
        packed_(bytes_of(shape)),
        counts_(comm::counts_for(comm::CollectiveOp::kAllToAll, bytes_of(shape), element_,
                                 context.comm.size())) {}

  void reference() override {
    ulysses_pack(nvlink_.send_buffer(), shape_, packed_.data(), context_.stream);
    comm::enqueue_collective(context_.comm, comm::CollectiveOp::kAllToAll, packed_.data(),
                             reference_out_.data(), counts_, context_.dtype, context_.stream);
  }
  void solution(int) override {
    ulysses_pull(nvlink_, shape_, context_.comm.rank(), solution_out_.data(), context_.stream);
  }
  std::string check_reference() override {
    const int me = context_.comm.rank();
    const std::size_t local_heads = shape_.heads / shape_.world;
    return check_output([&](std::size_t e) {
      // Output element e = [q][c][h][x]; its source is rank q / (S/W)'s [p][c][me*hl + h][x].
      const std::size_t x = e % head_dim_;
      std::size_t rest = e / head_dim_;
      const std::size_t h = rest % local_heads;
      rest /= local_heads;
      const std::size_t c = rest % 3;
      const std::size_t q = rest / 3;
      const int source = static_cast<int>(q / shape_.local_seq);
      const std::size_t p = q % shape_.local_seq;
      const std::size_t index = ((p * 3 + c) * shape_.heads + me * local_heads + h) * head_dim_ + x;
      return core::test_value(seed_, source, index);
    });
  }

 private:
  static std::size_t bytes_of(const UlyssesShape& s) {
    return static_cast<std::size_t>(s.local_seq) * 3 * s.heads * s.head_bytes;
  }
  UlyssesShape shape_;
  std::size_t head_dim_;
  core::DeviceBuffer packed_;
  comm::CollectiveCounts counts_;
};

class UlyssesQkvA2a final : public bench::Problem {
 public:
  std::string name() const override { return "ulysses-qkv-a2a"; }
  bench::Category category() const override { return bench::Category::kSequenceParallel; }
  std::string description() const override {
    return "sequence->head all-to-all of packed QKV [S/W][3][heads][d] -> [S][3][heads/W][d]";
  }
  std::vector<bench::ProblemSize> sizes() const override {
    const auto size = [](const char* name, int seq, int heads) {
      return bench::ProblemSize{name, {{"seq", seq}, {"heads", heads}, {"head_dim", 128}}};
    };
    return {size("S1K-h32", 1024, 32), size("S4K-h32", 4096, 32), size("S16K-h16", 16384, 16)};
  }
  std::vector<std::string> solutions() const override { return {"kiln-nvlink"}; }
  roofline::CostModel cost(const bench::ProblemSize& size, core::DType dtype,
                           int world) const override {
    // Per rank: its whole shard (b bytes) is read once and b written; (W-1)/W of it crosses
    // the interconnect each way, as in an all-to-all of b bytes.
    const double b = static_cast<double>(size.dim("seq")) / world * 3 * size.dim("heads") *
                     size.dim("head_dim") * core::dtype_size(dtype);
    return {{{"alltoall",
              {{"exchange", 0, roofline::Precision::kFp32, 2 * b,
                roofline::bus_bytes(comm::CollectiveOp::kAllToAll, b, world)}}}}};
  }
  std::unique_ptr<bench::ProblemRun> start(const bench::ProblemSize& size,
                                           bench::RankContext& context) const override {
    const int world = context.comm.size();
    const int seq = static_cast<int>(size.dim("seq")), heads = static_cast<int>(size.dim("heads"));
    const int head_dim = static_cast<int>(size.dim("head_dim"));
    if (seq % world != 0 || heads % world != 0) {
      throw UsageError(fmt::format("{} {} on {} ranks: seq {} and heads {} must split evenly",
                                   name(), size.name, world, seq, heads));
    }
    UlyssesShape shape;
    shape.local_seq = seq / world;
    shape.heads = heads;
    shape.world = world;
    shape.head_bytes = static_cast<std::size_t>(head_dim) * core::dtype_size(context.dtype);
    require_whole_vectors(shape.head_bytes, size, name(), world);
    return std::make_unique<UlyssesRun>(context, shape, head_dim);
  }
};

}  // namespace

std::unique_ptr<bench::Problem> make_ulysses_qkv_a2a() {
  return std::make_unique<UlyssesQkvA2a>();
}

}  // namespace kiln::problems
