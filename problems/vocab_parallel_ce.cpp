// vocab-parallel-ce: cross-entropy loss of every token when the vocabulary is split over the
// ranks (Megatron-style vocab parallelism): each rank holds tokens x vocab/W bf16 logits and every
// token's global target; every rank ends with every token's loss (fp32).
// Reference (unoptimized): local max -> NCCL all-reduce(max) -> local sum of exp(x - max) ->
// all-reduce(sum) -> target logit -> all-reduce(sum) -> loss: four kernels and three collectives.
// Solution "kiln-nvlink-fused": one online-softmax pass gives (max, sum exp, target) per token,
// one NVLink all-gather of those 16-byte records, one merge: three launches, one barrier.
#include <nccl.h>
#include <cmath>
#include <cstring>

#include "comm/nccl_check.hpp"
#include "problems/peer_collective.hpp"
#include "problems/registry.hpp"
#include "problems/vocab_parallel_ce_kernels.hpp"
#include "roofline/bus_volume.hpp"

namespace kiln::problems {
namespace {

std::uint64_t rank_seed(std::uint64_t seed, int rank) {
  return core::mix64(seed ^ (0xC0FFEEull + static_cast<std::uint64_t>(rank)));
}

int target_of(std::uint64_t seed, int token, int vocab) {
  return static_cast<int>(core::mix64(seed * 31 + static_cast<std::uint64_t>(token)) %
                          static_cast<std::uint64_t>(vocab));
}

class CrossEntropyRun final : public bench::ProblemRun {
 public:
  CrossEntropyRun(bench::RankContext& context, int tokens, int vocab)
      : context_(context),
        world_(context.comm.size()),
        tokens_(tokens),
        vocab_(vocab),
        vocab_local_(vocab / context.comm.size()),
        logits_(static_cast<std::size_t>(tokens) * vocab_local_ * 2),
        targets_(static_cast<std::size_t>(tokens) * sizeof(int)),
        max_(tokens * sizeof(float)),
        sum_(tokens * sizeof(float)),
        target_(tokens * sizeof(float)),
        reference_loss_(tokens * sizeof(float)),
        solution_loss_(tokens * sizeof(float)),
        gathered_(static_cast<std::size_t>(world_) * tokens * 16),
        // Two halves, written by call parity: a late peer may still be reading the previous
        // call's records (the send buffer contract in comm/nvlink_collectives.hpp).
        nvlink_(context.comm, 2 * static_cast<std::size_t>(tokens) * 16) {}

  void make_inputs(std::uint64_t seed) override {
    seed_ = seed;
    core::fill_uniform(logits_.data(), core::DType::kBf16,
                       static_cast<std::uint64_t>(tokens_) * vocab_local_,
                       rank_seed(seed, context_.comm.rank()), context_.stream);
    std::vector<int> targets(tokens_);
    for (int t = 0; t < tokens_; ++t) targets[t] = target_of(seed, t, vocab_);
    KILN_CUDA_CHECK(cudaMemcpyAsync(targets_.data(), targets.data(), targets_.bytes(),
                                    cudaMemcpyHostToDevice, context_.stream));
    KILN_CUDA_CHECK(cudaStreamSynchronize(context_.stream));  // `targets` goes out of scope
  }
  void poison_outputs() override {
    core::poison(reference_loss_.data(), reference_loss_.bytes(), context_.stream);
    core::poison(solution_loss_.data(), solution_loss_.bytes(), context_.stream);
  }
  void reference() override {
    comm::Communicator& c = context_.comm;
    const auto all_reduce = [&](void* buffer, ncclRedOp_t op, const char* what) {
      c.call(what, [&] {
        return ncclAllReduce(buffer, buffer, tokens_, ncclFloat32, op, c.get(), context_.stream);
      });
    };
    ce_local_max(logits_.data(), tokens_, vocab_local_, max_.as<float>(), context_.stream);
    all_reduce(max_.data(), ncclMax, "cross-entropy max");
    ce_local_sum_exp(logits_.data(), tokens_, vocab_local_, max_.as<float>(), sum_.as<float>(),
                     context_.stream);
    all_reduce(sum_.data(), ncclSum, "cross-entropy sum");
    ce_target_logit(logits_.data(), targets_.as<int>(), tokens_, vocab_local_, vocab_start(),
                    target_.as<float>(), context_.stream);
    all_reduce(target_.data(), ncclSum, "cross-entropy target");
    ce_finish(max_.as<float>(), sum_.as<float>(), target_.as<float>(), tokens_,
              reference_loss_.as<float>(), context_.stream);
  }
  void solution(int) override {
    const std::size_t bytes = static_cast<std::size_t>(tokens_) * 16;
    const std::size_t offset = (calls_++ % 2) * bytes;
    ce_local_stats(logits_.data(), targets_.as<int>(), tokens_, vocab_local_, vocab_start(),
                   reinterpret_cast<float*>(static_cast<char*>(nvlink_.send_buffer()) + offset),
                   context_.stream);
    nvlink_.all_gather(bytes, gathered_.data(), context_.stream, offset);
    ce_merge(gathered_.as<float>(), world_, tokens_, solution_loss_.as<float>(), context_.stream);
  }
  std::string check_reference() override {
    const std::vector<float> loss = download(reference_loss_);
    // The full loss of a few tokens from every rank's logits, rebuilt on the host in double.
    for (int t : {0, 1, tokens_ / 2, tokens_ - 1}) {
      double m = -1e300;
      std::vector<double> row(vocab_);
      for (int r = 0; r < world_; ++r) {
        for (int j = 0; j < vocab_local_; ++j) {
          const std::uint64_t index = static_cast<std::uint64_t>(t) * vocab_local_ + j;
          row[r * vocab_local_ + j] =
              core::round_to_bf16(core::uniform_value(rank_seed(seed_, r), index));
          m = std::max(m, row[r * vocab_local_ + j]);
        }
      }
      double s = 0;
      for (double x : row) s += std::exp(x - m);
      const double want = std::log(s) + m - row[target_of(seed_, t, vocab_)];
      if (!(std::abs(loss[t] - want) <= 1e-3 * std::max(1.0, std::abs(want)))) {
        return fmt::format("rank {}: reference loss of token {} is {}, the host's {}",
                           context_.comm.rank(), t, loss[t], want);
      }
    }
    return "";
  }
  std::string compare() override {
    const std::vector<float> want = download(reference_loss_), got = download(solution_loss_);
    for (int t = 0; t < tokens_; ++t) {
      if (!(std::abs(got[t] - want[t]) <= 1e-4 * std::max(1.0f, std::abs(want[t])))) {
        return fmt::format("rank {}: loss of token {} is {}, the reference's {}",
                           context_.comm.rank(), t, got[t], want[t]);
      }
    }
    return "";
  }

 private:
  int vocab_start() const { return context_.comm.rank() * vocab_local_; }
  std::vector<float> download(const core::DeviceBuffer& buffer) const {
    std::vector<float> host(buffer.bytes() / sizeof(float));
    KILN_CUDA_CHECK(cudaMemcpy(host.data(), buffer.data(), buffer.bytes(), cudaMemcpyDeviceToHost));
    return host;
  }

  bench::RankContext& context_;
  int world_, tokens_, vocab_, vocab_local_;
  std::uint64_t seed_ = 0;
  core::DeviceBuffer logits_, targets_, max_, sum_, target_, reference_loss_, solution_loss_,
      gathered_;
  comm::NvlinkCollectives nvlink_;
  std::uint64_t calls_ = 0;  // solution() calls: their parity picks the send buffer's half
};

class VocabParallelCrossEntropy final : public bench::Problem {
 public:
  std::string name() const override { return "vocab-parallel-ce"; }
  bench::Category category() const override { return bench::Category::kVocabParallel; }
  std::string description() const override {
    return "cross-entropy over a vocabulary split across ranks (max, sum-exp, target reduced)";
  }
  std::vector<bench::ProblemSize> sizes() const override {
    return {{"1Kx32K", {{"tokens", 1024}, {"vocab", 32768}}},
            {"4Kx128K", {{"tokens", 4096}, {"vocab", 131072}}}};
  }
  std::vector<std::string> solutions() const override { return {"kiln-nvlink-fused"}; }
  roofline::CostModel cost(const bench::ProblemSize& size, core::DType, int world) const override {
    const double tokens = static_cast<double>(size.dim("tokens"));
    const double local = static_cast<double>(size.dim("vocab")) / world;
    // Read the logits once (an exp and a few flops each); exchange three floats per token.
    return {{{"local statistics",
              {{"softmax pass", 4 * tokens * local, roofline::Precision::kFp32, tokens * local * 2,
                0}}},
             {"combine",
              {{"exchange", 0, roofline::Precision::kFp32, 0,
                roofline::bus_bytes(comm::CollectiveOp::kAllReduce, tokens * 12, world)}}}}};
  }
  std::unique_ptr<bench::ProblemRun> start(const bench::ProblemSize& size,
                                           bench::RankContext& context) const override {
    const int world = context.comm.size();
    const int vocab = static_cast<int>(size.dim("vocab"));
    if (vocab % world != 0) {
      throw UsageError(fmt::format("{} {}: a vocabulary of {} does not split over {} ranks", name(),
                                   size.name, vocab, world));
    }
    if (context.dtype != core::DType::kBf16) {
      throw UsageError(name() + ": logits are bf16 only (-d bf16)");
    }
    return std::make_unique<CrossEntropyRun>(context, static_cast<int>(size.dim("tokens")), vocab);
  }
};

}  // namespace

std::unique_ptr<bench::Problem> make_vocab_parallel_ce() {
  return std::make_unique<VocabParallelCrossEntropy>();
}

}  // namespace kiln::problems
