// moe-dispatch (expert parallel): each rank holds T tokens (T x H bf16) and their top-k experts;
// every token row goes to the rank of each expert it chose, landing in that rank's receive buffer
// in expert-major order (moe_routing.hpp). Counts are uneven (skewed routing), so no rank knows
// where its rows go before hearing every rank's counts.
// Reference, as Megatron's all-to-all dispatcher: routing map and prefix sum, rows permuted by
// expert, counts exchanged through NCCL and read on the host (a synchronisation), grouped
// ncclSend/ncclRecv of the rows, then the received source-major chunks sorted to expert-major.
// Solution "kiln-nvlink": counts and positions on the device, exchanged through peer memory behind
// one device barrier, then each rank writes its rows straight into the receivers' buffers over
// NVLink, and a last barrier tells the receivers their rows have landed. No NCCL, no host round
// trip (the shape of DeepEP's intranode dispatch; the code is kiln's).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

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

class MoeDispatchRun final : public bench::ProblemRun {
 public:
  MoeDispatchRun(bench::RankContext& context, const MoeDims& dims)
      : context_(context),
        dims_(dims),
        capacity_bytes_(dims.capacity_rows() * dims.row_bytes()),
        inputs_(context.comm, dims.tokens * dims.row_bytes(), dims.choices()),
        received_(context.comm, capacity_bytes_, "moe-dispatch receive buffer"),
        send_(dims.choices() * dims.row_bytes()),
        staging_(capacity_bytes_),
        reference_out_(capacity_bytes_),
        reference_routing_(context, dims, /*to_expert_major=*/true),
        device_routing_(context, dims) {}

  void make_inputs(std::uint64_t seed) override {
    seed_ = seed;
    const int me = context_.comm.rank();
    layout_ = make_layout(dims_, seed);
    core::fill_uniform(inputs_.rows(), core::DType::kBf16,
                       static_cast<std::uint64_t>(dims_.tokens) * dims_.hidden,
                       moe_rows_seed(seed, me), context_.stream);
    inputs_.upload(layout_.routing[me], context_.stream);
  }
  void poison_outputs() override {
    core::poison(reference_out_.data(), capacity_bytes_, context_.stream);
    core::poison(received_.local(), capacity_bytes_, context_.stream);
  }
  void reference() override {
    reference_routing_.run(inputs_.topk_idx());  // synchronises the host
    const MoeExchangePlan& plan = reference_routing_.plan();
    moe_permute(inputs_.rows(), inputs_.topk_idx(), reference_routing_.send_row(), dims_,
                send_.data(), context_.stream);
    moe_exchange_rows(context_, dims_, send_.data(), plan.send_offset, plan.send_rows,
                      staging_.data(), plan.recv_offset, plan.recv_rows);
    moe_move_chunks(staging_.data(), reference_out_.data(), reference_routing_.chunks(),
                    static_cast<int>(plan.chunks.size()), plan.received, dims_, context_.stream);
  }
  void solution(int) override {
    device_routing_.run(inputs_.topk_idx());  // waits for every rank's inputs and counts
    MoePeers recv{};
    for (int r = 0; r < dims_.world; ++r) recv.rank[r] = received_.peer(r);
    moe_push_rows(inputs_.rows(), inputs_.topk_idx(), device_routing_.positions(),
                  device_routing_.bases(), dims_, recv, context_.stream);
    // Every peer's rows have landed here (each pushed before arriving) when this stream goes on.
    device_routing_.nvlink().barrier(context_.stream);
  }
  std::string check_reference() override {
    // Every received row, at a few columns, against the source's X rebuilt on the host.
    const int me = context_.comm.rank();
    const std::vector<std::uint16_t> out = download(reference_out_.data());
    const int h = dims_.hidden;
    const int columns[] = {0, 1, 7, h / 3, h / 2, h - 8, h - 1};
    for (int s = 0; s < dims_.world; ++s) {
      const std::uint64_t x_seed = moe_rows_seed(seed_, s);
      for (std::size_t c = 0; c < dims_.choices(); ++c) {
        const MoeSlot slot = layout_.slots[s][c];
        if (slot.rank != me) continue;
        const std::uint64_t token = c / dims_.topk;
        for (int column : columns) {
          const float want = core::round_to_bf16(core::uniform_value(
              x_seed, token * dims_.hidden + static_cast<std::uint64_t>(column)));
          const float got = core::half_bits_to_float(
              out[static_cast<std::size_t>(slot.row) * h + column], core::DType::kBf16);
          if (got != want) {
            return fmt::format(
                "rank {}: reference row {} (rank {} token {}) column {} is {}, the host's {}", me,
                slot.row, s, token, column, got, want);
          }
        }
      }
    }
    return "";
  }
  std::string compare() override {
    // Byte-exact over the received rows; the capacity past them is not part of the output.
    const std::vector<std::uint16_t> want = download(reference_out_.data()),
                                     got = download(received_.local());
    if (want.empty()) return "";  // a rank may receive nothing
    if (std::memcmp(want.data(), got.data(), want.size() * 2) == 0) return "";
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (want[i] != got[i]) {
        return fmt::format(
            "rank {}: received row {} element {} is {:#06x}, the reference's {:#06x} ({} rows "
            "received)",
            context_.comm.rank(), i / dims_.hidden, i % dims_.hidden, got[i], want[i],
            received_rows());
      }
    }
    return "";
  }
  bench::CandidateBuffers candidate_buffers() override {
    bench::CandidateBuffers b;
    inputs_.add_to(b);
    b.outputs = {received_.local()};
    b.output_bytes = {capacity_bytes_};
    return b;
  }

 private:
  std::int64_t received_rows() const { return layout_.received[context_.comm.rank()]; }
  // The first received_rows() rows of a receive buffer.
  std::vector<std::uint16_t> download(const void* buffer) const {
    std::vector<std::uint16_t> host(static_cast<std::size_t>(received_rows()) * dims_.hidden);
    if (host.empty()) return host;
    KILN_CUDA_CHECK(cudaMemcpy(host.data(), buffer, host.size() * 2, cudaMemcpyDeviceToHost));
    return host;
  }

  bench::RankContext& context_;
  MoeDims dims_;
  std::size_t capacity_bytes_;
  std::uint64_t seed_ = 0;
  MoeLayout layout_;
  MoeInputs inputs_;
  comm::PeerMemory received_;  // the solution's output: peers write into it
  core::DeviceBuffer send_, staging_, reference_out_;
  MoeReferenceRouting reference_routing_;
  MoeDeviceRouting device_routing_;
};

class MoeDispatch final : public bench::Problem {
 public:
  std::string name() const override { return "moe-dispatch"; }
  bench::Category category() const override { return bench::Category::kExpertParallel; }
  std::string description() const override {
    return "expert-parallel dispatch: each token row to the ranks of its top-k experts (skewed "
           "routing), expert-major receive buffers";
  }
  std::vector<bench::ProblemSize> sizes() const override { return moe_sizes(); }
  std::vector<std::string> solutions() const override { return {"kiln-nvlink"}; }
  roofline::CostModel cost(const bench::ProblemSize& size, core::DType, int world) const override {
    const MoeDims d = moe_dims(size, world);
    const double row = static_cast<double>(d.row_bytes());
    // The expected traffic of the skewed routing (moe_traffic), not the uniform T*k*(W-1)/W: the
    // rank that owns the hot experts receives about twice its share. HBM: X read once, received
    // rows written (by the peers' stores) on the busiest rank; routing metadata is negligible.
    const MoeTraffic traffic = moe_traffic(d);
    return {{{"dispatch",
              {{"exchange", 0, roofline::Precision::kFp32, d.tokens * row + traffic.received * row,
                std::max(traffic.sent_remote, traffic.received_remote) * row}}}}};
  }
  std::unique_ptr<bench::ProblemRun> start(const bench::ProblemSize& size,
                                           bench::RankContext& context) const override {
    const MoeDims dims = moe_dims(size, context.comm.size());
    require_runnable(dims, context.dtype, name(), size.name);
    return std::make_unique<MoeDispatchRun>(context, dims);
  }
};

}  // namespace

std::unique_ptr<bench::Problem> make_moe_dispatch() {
  return std::make_unique<MoeDispatch>();
}

}  // namespace kiln::problems
