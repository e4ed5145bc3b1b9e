// reduce-sum-int32: the sum of a 1-D int32 array (one GPU), the tensor-reduction study's problem
// and issue 20's ladder test for `kiln evolve`. Sizes 1e6, 1e8 and 1e9 elements. Inputs are kiln's
// test values (small non-zero integers, core/test_values.hpp), so the sum is exact in int32 and
// every element changes it: a kernel that skips or double-counts any part is wrong, in any
// summation order. Reference: kiln's reduction kernel at the study's step v3b (sequential
// addressing in shared memory, warp-shuffle tail, multi-pass); its own check recomputes the sum
// on the host. Solutions: "cub" (cub::DeviceReduce::Sum) and "kiln-vec" (kiln's fastest preset:
// 16-byte loads, persistent grid, last-block completion).
#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "comm/communicator.hpp"
#include "core/cuda_check.hpp"
#include "core/fill.hpp"
#include "core/test_values.hpp"
#include "kernels/reduce.hpp"
#include "problems/kb1_common.hpp"
#include "problems/reduce_sum_cub.hpp"
#include "problems/registry.hpp"

namespace kiln::problems {
namespace {

using kernels::ReduceOp;

const kernels::ReduceVariant& preset(const std::string& name) {
  for (const kernels::ReduceVariant& v : kernels::reduce_presets())
    if (v.name == name) return v;
  throw Error("reduce-sum-int32: kiln's reduction preset " + name + " is missing");
}

// The sum of test_value(seed, 0, i) for i < count, in int64 on every host core.
std::int64_t host_sum(std::uint64_t seed, std::int64_t count) {
  const int threads = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 64u));
  std::vector<std::int64_t> part(static_cast<std::size_t>(threads), 0);
  std::vector<std::thread> pool;
  const std::int64_t chunk = (count + threads - 1) / threads;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      const std::int64_t begin = t * chunk, end = std::min(count, begin + chunk);
      std::int64_t s = 0;
      for (std::int64_t i = begin; i < end; ++i)
        s += core::test_value(seed, 0, static_cast<std::uint64_t>(i));
      part[static_cast<std::size_t>(t)] = s;
    });
  }
  for (std::thread& th : pool) th.join();
  std::int64_t total = 0;
  for (const std::int64_t s : part) total += s;
  return total;
}

class ReduceSumRun final : public bench::ProblemRun {
 public:
  ReduceSumRun(std::int64_t count, cudaStream_t stream)
      : count_(count),
        stream_(stream),
        x_(sizeof(std::int32_t) * count),
        reference_(sizeof(std::int32_t)),
        solution_(sizeof(std::int32_t)),
        reference_variant_(preset("v3b")),
        vec_variant_(preset("vec")),
        reference_workspace_(reference_variant_, core::DType::kInt32, count),
        vec_workspace_(vec_variant_, core::DType::kInt32, count),
        cub_temp_(std::max<std::size_t>(cub_sum_int32_temp_bytes(count), 1)) {}
  void make_inputs(std::uint64_t seed) override {
    seed_ = seed;
    core::fill_test_values(x_.data(), core::DType::kInt32, static_cast<std::uint64_t>(count_), seed,
                           0, stream_);
  }
  void poison_outputs() override {
    core::poison(reference_.data(), sizeof(std::int32_t), stream_);
    core::poison(solution_.data(), sizeof(std::int32_t), stream_);
  }
  void reference() override {
    kernels::reduce(reference_variant_, ReduceOp::kSum, core::DType::kInt32, x_.data(), count_,
                    reference_.data(), reference_workspace_, stream_);
  }
  void solution(int index) override {
    if (index == 0) {  // "cub"
      launch_cub_sum_int32(x_.as<std::int32_t>(), solution_.as<std::int32_t>(), count_,
                           cub_temp_.data(), cub_temp_.bytes(), stream_);
      return;
    }
    kernels::reduce(vec_variant_, ReduceOp::kSum, core::DType::kInt32, x_.data(), count_,
                    solution_.data(), vec_workspace_, stream_);
  }
  std::string check_reference() override {
    const std::int32_t got = read(reference_);
    const std::int64_t want = host_sum(seed_, count_);
    if (got == want) return "";
    return fmt::format("the host's sum of {} elements is {}, the reference wrote {}", count_, want,
                       got);
  }
  std::string compare() override {
    const std::int32_t got = read(solution_), want = read(reference_);
    if (got == want) return "";
    return fmt::format("sum of {} int32 elements: got {}, expected {} (exact)", count_, got, want);
  }
  bench::CandidateBuffers candidate_buffers() override {
    return bench::one_rank_buffers({{x_.data(), x_.bytes()}}, solution_.data(),
                                   sizeof(std::int32_t));
  }

 private:
  std::int32_t read(const core::DeviceBuffer& buffer) const {
    std::int32_t value = 0;
    KILN_CUDA_CHECK(cudaStreamSynchronize(stream_));
    KILN_CUDA_CHECK(cudaMemcpy(&value, buffer.data(), sizeof value, cudaMemcpyDeviceToHost));
    return value;
  }
  std::int64_t count_;
  cudaStream_t stream_;
  core::DeviceBuffer x_, reference_, solution_;
  // Looked up once, not on every (timed) call.
  const kernels::ReduceVariant& reference_variant_;
  const kernels::ReduceVariant& vec_variant_;
  kernels::ReduceWorkspace reference_workspace_, vec_workspace_;
  core::DeviceBuffer cub_temp_;
  std::uint64_t seed_ = 0;
};

class ReduceSum final : public bench::Problem {
 public:
  std::string name() const override { return "reduce-sum-int32"; }
  bench::Category category() const override { return bench::Category::kSingleGpu; }
  std::string description() const override {
    return "sum of a 1-D int32 array (the tensor-reduction study's problem; exact)";
  }
  std::vector<bench::ProblemSize> sizes() const override {
    return {{"1e6", {{"count", 1'000'000}}},
            {"1e8", {{"count", 100'000'000}}},
            {"1e9", {{"count", 1'000'000'000}}}};
  }
  std::vector<std::string> solutions() const override { return {"cub", "kiln-vec"}; }
  std::optional<core::DType> fixed_dtype() const override { return core::DType::kInt32; }
  roofline::CostModel cost(const bench::ProblemSize& size, core::DType dtype,
                           int world) const override {
    return *floor_cost(size, dtype, world);
  }
  // Every input byte read once, one addition per element.
  std::optional<roofline::CostModel> floor_cost(const bench::ProblemSize& size, core::DType,
                                                int) const override {
    const double n = static_cast<double>(size.dim("count"));
    return roofline::CostModel{
        {{"reduce", {{"reduce", n, roofline::Precision::kFp32, 4.0 * n + 4.0, 0}}}}};
  }
  std::unique_ptr<bench::ProblemRun> start(const bench::ProblemSize& size,
                                           bench::RankContext& context) const override {
    kb1::require_one_rank(context, name());
    const std::int64_t count = size.dim("count");
    if (count < 1) throw UsageError(fmt::format("{}: count {} must be >= 1", name(), count));
    return std::make_unique<ReduceSumRun>(count, context.stream);
  }
};

}  // namespace

std::unique_ptr<bench::Problem> make_reduce_sum_int32() {
  return std::make_unique<ReduceSum>();
}

}  // namespace kiln::problems
