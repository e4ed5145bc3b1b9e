// Routing, layout and the shared device pieces of the MoE problems (see moe_routing.hpp).
#include "problems/moe_routing.hpp"

#include <fmt/format.h>
#include <nccl.h>

#include <algorithm>
#include <climits>

#include "comm/communicator.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/test_values.hpp"
#include "problems/moe_kernels.hpp"

namespace kiln::problems {
namespace {

std::uint64_t routing_seed(std::uint64_t seed, int rank) {
  return core::mix64(seed ^ (0x0E0E5EEDull + static_cast<std::uint64_t>(rank)));
}

// The seed of the traffic estimate behind the cost models (any fixed value).
constexpr std::uint64_t kTrafficSeed = 1;

}  // namespace

std::size_t MoeDims::capacity_rows() const {
  return static_cast<std::size_t>(world) * tokens * std::min(topk, local_experts());
}

std::vector<bench::ProblemSize> moe_sizes() {
  const auto size = [](const char* name, int tokens, int hidden, int topk, int experts) {
    return bench::ProblemSize{
        name, {{"tokens", tokens}, {"hidden", hidden}, {"topk", topk}, {"experts", experts}}};
  };
  // DeepSeek-V3-like decode step (256 experts, hidden 7168) and a prefill chunk of a model with
  // 64 experts (hidden 4096); 8 choices per token in both.
  return {size("decode", 128, 7168, 8, 256), size("prefill", 2048, 4096, 8, 64)};
}

MoeDims moe_dims(const bench::ProblemSize& size, int world) {
  MoeDims dims;
  dims.tokens = static_cast<int>(size.dim("tokens"));
  dims.hidden = static_cast<int>(size.dim("hidden"));
  dims.topk = static_cast<int>(size.dim("topk"));
  dims.experts = static_cast<int>(size.dim("experts"));
  dims.world = world;
  return dims;
}

void require_runnable(const MoeDims& d, core::DType dtype, const std::string& problem,
                      const std::string& size) {
  const std::string what = fmt::format("{} {} on {} ranks", problem, size, d.world);
  if (dtype != core::DType::kBf16) throw UsageError(problem + ": tokens are bf16 only (-d bf16)");
  if (d.world > MoePeers::kMaxWorld) {
    throw UsageError(
        fmt::format("{}: peer memory reaches at most {} ranks", what, MoePeers::kMaxWorld));
  }
  if (d.tokens < 1 || d.hidden < 1 || d.topk < 1 || d.experts < 1)
    throw UsageError(what + ": every dimension must be positive");
  if (d.experts % d.world != 0) {
    throw UsageError(
        fmt::format("{}: {} experts do not split evenly over the ranks", what, d.experts));
  }
  if (d.row_bytes() % 16 != 0) {
    throw UsageError(
        fmt::format("{}: rows of {} bytes are not whole 16-byte vectors", what, d.row_bytes()));
  }
  if (d.topk > d.experts) {
    throw UsageError(
        fmt::format("{}: {} distinct choices out of {} experts", what, d.topk, d.experts));
  }
  if (d.experts > kMoeMaxExperts) {
    throw UsageError(fmt::format("{}: {} experts; the kernels take at most {}", what, d.experts,
                                 kMoeMaxExperts));
  }
  // Rows, choices and map entries are int32 on the device.
  const std::size_t map_entries = static_cast<std::size_t>(d.experts) * d.tokens;
  if (d.capacity_rows() > INT_MAX || map_entries > INT_MAX)
    throw UsageError(what + ": too many tokens for int32 row indices");
}

std::uint64_t moe_rows_seed(std::uint64_t seed, int rank) {
  return core::mix64(seed ^ (0x70C3E5ull + static_cast<std::uint64_t>(rank)));
}

MoeRouting make_routing(const MoeDims& d, std::uint64_t seed, int rank) {
  // Each token draws k experts without replacement, with probability proportional to a Zipf-like
  // weight 1 / (E + 4e): expert 0 is 5x as likely as the last, and on 8 ranks the first rank
  // takes about twice its even share of the rows and the last about half (a real router's hot
  // experts). Integer arithmetic only, so every rank and host rebuilds the same choices.
  const std::uint64_t s = routing_seed(seed, rank);
  std::vector<std::uint64_t> weight(d.experts), left(d.experts);
  std::uint64_t all = 0;
  for (int e = 0; e < d.experts; ++e) {
    weight[e] = (1ull << 30) / static_cast<std::uint64_t>(d.experts + 4 * e);
    all += weight[e];
  }
  MoeRouting routing;
  routing.experts.resize(d.choices());
  routing.weights.resize(d.choices());
  const std::uint64_t draws_per_token = 2 * static_cast<std::uint64_t>(d.topk);
  std::vector<double> gates(d.topk);
  for (int t = 0; t < d.tokens; ++t) {
    left = weight;
    std::uint64_t total = all;
    double gate_sum = 0;
    for (int j = 0; j < d.topk; ++j) {
      const std::uint64_t draw = static_cast<std::uint64_t>(t) * draws_per_token + j;
      std::uint64_t pick = core::mix64(s ^ core::mix64(draw)) % total;
      int e = 0;
      while (pick >= left[e]) pick -= left[e++];  // chosen experts have weight 0 now
      routing.experts[static_cast<std::size_t>(t) * d.topk + j] = e;
      total -= left[e];
      left[e] = 0;
      // Gate values in [1, 2), normalised below: positive, none negligible.
      const std::uint64_t h = core::mix64(s ^ core::mix64(draw + d.topk));
      gates[j] = 1.0 + static_cast<double>(h >> 11) * 0x1p-53;
      gate_sum += gates[j];
    }
    for (int j = 0; j < d.topk; ++j)
      routing.weights[static_cast<std::size_t>(t) * d.topk + j] =
          static_cast<float>(gates[j] / gate_sum);
  }
  return routing;
}

MoeLayout make_layout(const MoeDims& d, std::uint64_t seed) {
  const int world = d.world, experts = d.experts, local = d.local_experts();
  MoeLayout layout;
  for (int s = 0; s < world; ++s) layout.routing.push_back(make_routing(d, seed, s));
  layout.counts.assign(static_cast<std::size_t>(world) * experts, 0);
  for (int s = 0; s < world; ++s)
    for (int e : layout.routing[s].experts)
      ++layout.counts[static_cast<std::size_t>(s) * experts + e];
  // start[s][e]: the first row of source s's tokens for e in e's rank: expert-major.
  std::vector<std::int64_t> start(layout.counts.size());
  layout.received.assign(world, 0);
  for (int r = 0; r < world; ++r) {
    std::int64_t row = 0;
    for (int e = r * local; e < (r + 1) * local; ++e) {
      for (int s = 0; s < world; ++s) {
        start[static_cast<std::size_t>(s) * experts + e] = row;
        row += layout.counts[static_cast<std::size_t>(s) * experts + e];
      }
    }
    layout.received[r] = row;
  }
  layout.slots.resize(world);
  for (int s = 0; s < world; ++s) {
    std::vector<std::int64_t> next(start.begin() + static_cast<std::ptrdiff_t>(s) * experts,
                                   start.begin() + static_cast<std::ptrdiff_t>(s + 1) * experts);
    const std::vector<int>& chosen = layout.routing[s].experts;
    layout.slots[s].resize(chosen.size());
    for (std::size_t c = 0; c < chosen.size(); ++c)  // token order, so stable by token
      layout.slots[s][c] = {d.owner(chosen[c]), next[chosen[c]]++};
  }
  return layout;
}

MoeExchangePlan moe_exchange_plan(const std::vector<int>& send_counts,
                                  const std::vector<int>& recv_counts, int world,
                                  bool to_expert_major) {
  const int local = static_cast<int>(recv_counts.size()) / world;
  MoeExchangePlan plan;
  plan.send_rows.assign(world, 0);
  plan.send_offset.assign(world, 0);
  plan.recv_rows.assign(world, 0);
  plan.recv_offset.assign(world, 0);
  std::int64_t sent = 0;
  for (int p = 0; p < world; ++p) {
    plan.send_offset[p] = sent;
    plan.recv_offset[p] = plan.received;
    for (int l = 0; l < local; ++l) {
      plan.send_rows[p] += send_counts[static_cast<std::size_t>(p) * local + l];
      plan.recv_rows[p] += recv_counts[static_cast<std::size_t>(p) * local + l];
    }
    sent += plan.send_rows[p];
    plan.received += plan.recv_rows[p];
  }
  const auto count = [&](int s, int l) -> std::int64_t {
    return recv_counts[static_cast<std::size_t>(s) * local + l];
  };
  // Where chunk (s, l) starts in each order.
  std::vector<std::int64_t> source_major(recv_counts.size()), expert_major(recv_counts.size());
  for (int s = 0; s < world; ++s) {
    std::int64_t row = plan.recv_offset[s];
    for (int l = 0; l < local; ++l) {
      source_major[static_cast<std::size_t>(s) * local + l] = row;
      row += count(s, l);
    }
  }
  std::int64_t row = 0;
  for (int l = 0; l < local; ++l) {
    for (int s = 0; s < world; ++s) {
      expert_major[static_cast<std::size_t>(s) * local + l] = row;
      row += count(s, l);
    }
  }
  const auto add = [&](int s, int l) {
    const std::size_t i = static_cast<std::size_t>(s) * local + l;
    if (to_expert_major)
      plan.chunks.push_back({source_major[i], expert_major[i], count(s, l)});
    else
      plan.chunks.push_back({expert_major[i], source_major[i], count(s, l)});
  };
  if (to_expert_major) {
    for (int s = 0; s < world; ++s)
      for (int l = 0; l < local; ++l) add(s, l);
  } else {
    for (int l = 0; l < local; ++l)
      for (int s = 0; s < world; ++s) add(s, l);
  }
  return plan;
}

MoeTraffic moe_traffic(const MoeDims& d) {
  MoeTraffic traffic;
  if (d.world < 1 || d.experts % d.world != 0 || d.topk < 1 || d.topk > d.experts) {
    // Dims the problem cannot run (start() refuses them): the uniform approximation, so that a
    // cost model asked for them still evaluates.
    const double choices = static_cast<double>(d.choices());
    traffic.sent_remote = traffic.received_remote = choices * (d.world - 1) / std::max(1, d.world);
    traffic.received = choices;
    return traffic;
  }
  const MoeLayout layout = make_layout(d, kTrafficSeed);
  for (int r = 0; r < d.world; ++r) {
    std::int64_t own = 0;  // rows r keeps (its tokens for its own experts)
    for (int e = r * d.local_experts(); e < (r + 1) * d.local_experts(); ++e)
      own += layout.counts[static_cast<std::size_t>(r) * d.experts + e];
    const double sent = static_cast<double>(d.choices()) - static_cast<double>(own);
    traffic.sent_remote = std::max(traffic.sent_remote, sent);
    traffic.received_remote =
        std::max(traffic.received_remote, static_cast<double>(layout.received[r] - own));
    traffic.received = std::max(traffic.received, static_cast<double>(layout.received[r]));
  }
  return traffic;
}

// ---------------------------------------------------------------------------------------------

namespace {

// Each part of a peer allocation starts on its own 256-byte boundary (vector loads, clean lines).
std::size_t round_up(std::size_t bytes) {
  return (bytes + 255) / 256 * 256;
}

}  // namespace

MoeInputs::MoeInputs(comm::Communicator& comm, std::size_t rows_bytes, std::size_t choices)
    : rows_bytes_(rows_bytes),
      choices_(choices),
      idx_offset_(round_up(rows_bytes)),
      weights_offset_(idx_offset_ + round_up(choices * sizeof(int))),
      memory_(comm, weights_offset_ + choices * sizeof(float), "MoE inputs") {}

const int* MoeInputs::topk_idx() const {
  return reinterpret_cast<const int*>(static_cast<const char*>(memory_.local()) + idx_offset_);
}

const float* MoeInputs::topk_weights() const {
  return reinterpret_cast<const float*>(static_cast<const char*>(memory_.local()) +
                                        weights_offset_);
}

void MoeInputs::upload(const MoeRouting& routing, cudaStream_t stream) {
  char* base = static_cast<char*>(memory_.local());
  KILN_CUDA_CHECK(cudaMemcpyAsync(base + idx_offset_, routing.experts.data(),
                                  choices_ * sizeof(int), cudaMemcpyHostToDevice, stream));
  KILN_CUDA_CHECK(cudaMemcpyAsync(base + weights_offset_, routing.weights.data(),
                                  choices_ * sizeof(float), cudaMemcpyHostToDevice, stream));
  KILN_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void MoeInputs::add_to(bench::CandidateBuffers& b) const {
  const std::size_t offsets[3] = {0, idx_offset_, weights_offset_};
  const std::size_t bytes[3] = {rows_bytes_, choices_ * sizeof(int), choices_ * sizeof(float)};
  for (int i = 0; i < 3; ++i) {
    b.inputs.push_back(static_cast<const char*>(memory_.local()) + offsets[i]);
    b.input_bytes.push_back(bytes[i]);
  }
  for (void* peer : memory_.peers())
    for (int i = 0; i < 3; ++i)
      b.peer_inputs.push_back(static_cast<const char*>(peer) + offsets[i]);
}

MoeReferenceRouting::MoeReferenceRouting(bench::RankContext& context, const MoeDims& dims,
                                         bool to_expert_major)
    : context_(context),
      dims_(dims),
      to_expert_major_(to_expert_major),
      map_(static_cast<std::size_t>(dims.experts) * dims.tokens * sizeof(int)),
      scan_(map_.bytes()),
      // Never empty: CUB takes a null storage pointer as a request for its size.
      scan_storage_(std::max<std::size_t>(moe_scan_storage_bytes(dims.experts * dims.tokens), 16)),
      counts_(dims.experts * sizeof(int)),
      recv_counts_(dims.experts * sizeof(int)),  // world x local experts
      chunks_(dims.experts * 3 * sizeof(std::int64_t)),
      send_counts_host_(dims.experts),
      recv_counts_host_(dims.experts) {}

void MoeReferenceRouting::run(const int* topk_idx) {
  const cudaStream_t stream = context_.stream;
  comm::Communicator& c = context_.comm;
  moe_routing_map(topk_idx, dims_, map_.as<int>(), stream);
  moe_exclusive_scan(map_.as<int>(), scan_.as<int>(), dims_.experts * dims_.tokens,
                     scan_storage_.data(), scan_storage_.bytes(), stream);
  moe_expert_counts(map_.as<int>(), scan_.as<int>(), dims_, counts_.as<int>(), stream);
  // Each rank tells each peer how many of its tokens go to each of the peer's experts.
  const int local = dims_.local_experts();
  const char* what = "MoE reference: token counts";
  c.call(what, [] { return ncclGroupStart(); });
  for (int p = 0; p < dims_.world; ++p) {
    c.call(what, [&] {
      return ncclSend(counts_.as<int>() + p * local, local, ncclInt32, p, c.get(), stream);
    });
    c.call(what, [&] {
      return ncclRecv(recv_counts_.as<int>() + p * local, local, ncclInt32, p, c.get(), stream);
    });
  }
  c.call(what, [] { return ncclGroupEnd(); });
  // The host needs the counts to size the token exchange: a synchronisation, as in Megatron.
  c.wait(stream, what);
  KILN_CUDA_CHECK(cudaMemcpy(send_counts_host_.data(), counts_.data(), counts_.bytes(),
                             cudaMemcpyDeviceToHost));
  KILN_CUDA_CHECK(cudaMemcpy(recv_counts_host_.data(), recv_counts_.data(), recv_counts_.bytes(),
                             cudaMemcpyDeviceToHost));
  plan_ = moe_exchange_plan(send_counts_host_, recv_counts_host_, dims_.world, to_expert_major_);
  chunks_host_.clear();
  for (const MoeChunk& chunk : plan_.chunks) {
    chunks_host_.push_back(chunk.from);
    chunks_host_.push_back(chunk.to);
    chunks_host_.push_back(chunk.rows);
  }
  // Pageable memory: the call returns once the table is staged, so chunks_host_ may change after.
  KILN_CUDA_CHECK(cudaMemcpyAsync(chunks_.data(), chunks_host_.data(),
                                  chunks_host_.size() * sizeof(std::int64_t),
                                  cudaMemcpyHostToDevice, stream));
}

void moe_exchange_rows(bench::RankContext& context, const MoeDims& dims, const void* send,
                       const std::vector<std::int64_t>& send_offset,
                       const std::vector<std::int64_t>& send_rows, void* recv,
                       const std::vector<std::int64_t>& recv_offset,
                       const std::vector<std::int64_t>& recv_rows) {
  comm::Communicator& c = context.comm;
  const std::size_t row = dims.row_bytes();
  const std::size_t elements = static_cast<std::size_t>(dims.hidden);
  const char* what = "MoE reference: token rows";
  c.call(what, [] { return ncclGroupStart(); });
  for (int p = 0; p < dims.world; ++p) {
    c.call(what, [&] {
      return ncclSend(static_cast<const char*>(send) + send_offset[p] * row,
                      send_rows[p] * elements, ncclBfloat16, p, c.get(), context.stream);
    });
    c.call(what, [&] {
      return ncclRecv(static_cast<char*>(recv) + recv_offset[p] * row, recv_rows[p] * elements,
                      ncclBfloat16, p, c.get(), context.stream);
    });
  }
  c.call(what, [] { return ncclGroupEnd(); });
}

MoeDeviceRouting::MoeDeviceRouting(bench::RankContext& context, const MoeDims& dims)
    : context_(context),
      dims_(dims),
      nvlink_(context.comm, 2 * static_cast<std::size_t>(dims.world) * dims.experts * sizeof(int)),
      positions_(dims.choices() * sizeof(int)),
      bases_(dims.experts * sizeof(int)) {}

void MoeDeviceRouting::run(const int* topk_idx) {
  const int half = static_cast<int>(calls_++ % 2);
  const int me = context_.comm.rank();
  const std::size_t half_ints = static_cast<std::size_t>(dims_.world) * dims_.experts;
  // This rank's row of counts in every rank's current half.
  MoePeers counts{};
  for (int r = 0; r < dims_.world; ++r) {
    counts.rank[r] = static_cast<int*>(nvlink_.send_peers()[r]) + half * half_ints +
                     static_cast<std::size_t>(me) * dims_.experts;
  }
  moe_count_positions(topk_idx, dims_, counts, positions_.as<int>(), context_.stream);
  moe_slot_bases(nvlink_, static_cast<const int*>(nvlink_.send_buffer()) + half * half_ints, dims_,
                 bases_.as<int>(), context_.stream);
}

}  // namespace kiln::problems
