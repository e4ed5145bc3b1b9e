// moe-combine (expert parallel): the way back from moe-dispatch. Each rank holds its experts'
// output rows Y in the expert-major layout of its receive buffer (moe_routing.hpp) and the
// routing of its own T tokens; it ends with out[t] = sum_j w[t][j] * (row of choice j of token t,
// on the rank of its expert), accumulated in fp32 in choice order and rounded once to bf16.
// Reference, as Megatron's all-to-all dispatcher: routing map and prefix sum, counts exchanged
// through NCCL and read on the host (a synchronisation), Y sorted to source-major chunks, grouped
// ncclSend/ncclRecv back to the tokens' ranks, then a weighted-sum kernel.
// Solution "kiln-nvlink": counts and positions on the device, exchanged through peer memory behind
// one device barrier, then one kernel pulls each token's k rows straight from the owners' Y over
// NVLink and sums them. Y changes only between trials, after the harness meets the ranks, so no
// barrier is needed after the reads.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "comm/communicator.hpp"
#include "core/cuda_check.hpp"
#include "core/fill.hpp"
#include "core/half_bits.hpp"
#include "core/test_values.hpp"
#include "problems/moe_kernels.hpp"
#include "problems/moe_routing.hpp"
#include "problems/registry.hpp"

namespace kiln::problems {
namespace {

// Within one bf16 rounding of `want` (sums taken in another order may round the other way), with
// a floor for values that cancel to near zero.
bool within_tolerance(float got, float want, float scale) {
  return std::isfinite(got) && std::abs(got - want) <= 0x1p-7f * std::abs(want) + 1e-6f * scale;
}

class MoeCombineRun final : public bench::ProblemRun {
 public:
  MoeCombineRun(bench::RankContext& context, const MoeDims& dims)
      : context_(context),
        dims_(dims),
        out_bytes_(static_cast<std::size_t>(dims.tokens) * dims.row_bytes()),
        inputs_(context.comm, dims.capacity_rows() * dims.row_bytes(), dims.choices()),
        staging_(dims.capacity_rows() * dims.row_bytes()),
        returned_(dims.choices() * dims.row_bytes()),
        reference_out_(out_bytes_),
        solution_out_(out_bytes_),
        reference_routing_(context, dims, /*to_expert_major=*/false),
        device_routing_(context, dims) {}

  void make_inputs(std::uint64_t seed) override {
    seed_ = seed;
    const int me = context_.comm.rank();
    layout_ = make_layout(dims_, seed);
    // Only the rows this rank received hold expert outputs; the rest of the capacity is unused.
    core::fill_uniform(inputs_.rows(), core::DType::kBf16,
                       static_cast<std::uint64_t>(layout_.received[me]) * dims_.hidden,
                       moe_rows_seed(seed, me), context_.stream);
    inputs_.upload(layout_.routing[me], context_.stream);
  }
  void poison_outputs() override {
    core::poison(reference_out_.data(), out_bytes_, context_.stream);
    core::poison(solution_out_.data(), out_bytes_, context_.stream);
  }
  void reference() override {
    reference_routing_.run(inputs_.topk_idx());  // synchronises the host
    const MoeExchangePlan& plan = reference_routing_.plan();
    moe_move_chunks(inputs_.rows(), staging_.data(), reference_routing_.chunks(),
                    static_cast<int>(plan.chunks.size()), plan.received, dims_, context_.stream);
    // The rows of each source's tokens go back to it; they arrive sorted by expert, as dispatch
    // sent them.
    moe_exchange_rows(context_, dims_, staging_.data(), plan.recv_offset, plan.recv_rows,
                      returned_.data(), plan.send_offset, plan.send_rows);
    moe_unpermute_weighted(returned_.data(), inputs_.topk_idx(), inputs_.topk_weights(),
                           reference_routing_.send_row(), dims_, reference_out_.data(),
                           context_.stream);
  }
  void solution(int) override {
    device_routing_.run(inputs_.topk_idx());  // waits for every rank's inputs and counts
    MoePeers y{};
    for (int r = 0; r < dims_.world; ++r) y.rank[r] = inputs_.rows_peers()[r];
    moe_pull_combine(y, inputs_.topk_idx(), inputs_.topk_weights(), device_routing_.positions(),
                     device_routing_.bases(), dims_, solution_out_.data(), context_.stream);
  }
  std::string check_reference() override {
    // Whole output rows of a few tokens, rebuilt on the host from the owners' Y and the routing.
    const int me = context_.comm.rank();
    const std::vector<float> out = download(reference_out_.data());
    const MoeRouting& routing = layout_.routing[me];
    for (int t : {0, 1, dims_.tokens / 2, dims_.tokens - 1}) {
      for (int h = 0; h < dims_.hidden; ++h) {
        float acc = 0.0f;
        for (int j = 0; j < dims_.topk; ++j) {
          const std::size_t c = static_cast<std::size_t>(t) * dims_.topk + j;
          const MoeSlot slot = layout_.slots[me][c];
          const float y = core::round_to_bf16(
              core::uniform_value(moe_rows_seed(seed_, slot.rank),
                                  static_cast<std::uint64_t>(slot.row) * dims_.hidden + h));
          acc = std::fma(routing.weights[c], y, acc);
        }
        const float want = core::round_to_bf16(acc);
        const float got = out[static_cast<std::size_t>(t) * dims_.hidden + h];
        if (!within_tolerance(got, want, 1.0f)) {
          return fmt::format("rank {}: reference out[{}][{}] is {}, the host's {}", me, t, h, got,
                             want);
        }
      }
    }
    return "";
  }
  std::string compare() override {
    const std::vector<float> want = download(reference_out_.data()),
                             got = download(solution_out_.data());
    float scale = 0.0f;
    for (float v : want) scale = std::max(scale, std::abs(v));
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (!within_tolerance(got[i], want[i], scale)) {
        return fmt::format("rank {}: out[{}][{}] is {}, the reference's {}", context_.comm.rank(),
                           i / dims_.hidden, i % dims_.hidden, got[i], want[i]);
      }
    }
    return "";
  }
  bench::CandidateBuffers candidate_buffers() override {
    bench::CandidateBuffers b;
    inputs_.add_to(b);
    b.outputs = {solution_out_.data()};
    b.output_bytes = {out_bytes_};
    return b;
  }

 private:
  std::vector<float> download(const void* buffer) const {
    std::vector<std::uint16_t> raw(out_bytes_ / 2);
    KILN_CUDA_CHECK(cudaMemcpy(raw.data(), buffer, out_bytes_, cudaMemcpyDeviceToHost));
    std::vector<float> values(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i)
      values[i] = core::half_bits_to_float(raw[i], core::DType::kBf16);
    return values;
  }

  bench::RankContext& context_;
  MoeDims dims_;
  std::size_t out_bytes_;
  std::uint64_t seed_ = 0;
  MoeLayout layout_;
  MoeInputs inputs_;  // Y, topk_idx, topk_weights; peers read Y
  core::DeviceBuffer staging_, returned_, reference_out_, solution_out_;
  MoeReferenceRouting reference_routing_;
  MoeDeviceRouting device_routing_;
};

class MoeCombine final : public bench::Problem {
 public:
  std::string name() const override { return "moe-combine"; }
  bench::Category category() const override { return bench::Category::kExpertParallel; }
  std::string description() const override {
    return "expert-parallel combine: each token's k expert outputs brought back from their ranks "
           "and summed with its gate weights (skewed routing)";
  }
  std::vector<bench::ProblemSize> sizes() const override { return moe_sizes(); }
  std::vector<std::string> solutions() const override { return {"kiln-nvlink"}; }
  roofline::CostModel cost(const bench::ProblemSize& size, core::DType, int world) const override {
    const MoeDims d = moe_dims(size, world);
    const double row = static_cast<double>(d.row_bytes());
    // The expected traffic of the skewed routing (moe_traffic), not the uniform T*k*(W-1)/W;
    // combine moves dispatch's rows the other way, so the busiest link carries the same. HBM on
    // the busiest rank: its Y rows read (by peers and itself) and its T output rows written.
    const MoeTraffic traffic = moe_traffic(d);
    return {{{"combine",
              {{"gather and weighted sum", 2.0 * d.tokens * d.topk * d.hidden,
                roofline::Precision::kFp32, traffic.received * row + d.tokens * row,
                std::max(traffic.sent_remote, traffic.received_remote) * row}}}}};
  }
  std::unique_ptr<bench::ProblemRun> start(const bench::ProblemSize& size,
                                           bench::RankContext& context) const override {
    const MoeDims dims = moe_dims(size, context.comm.size());
    require_runnable(dims, context.dtype, name(), size.name);
    return std::make_unique<MoeCombineRun>(context, dims);
  }
};

}  // namespace

std::unique_ptr<bench::Problem> make_moe_combine() {
  return std::make_unique<MoeCombine>();
}

}  // namespace kiln::problems
