// The problem registry without a GPU: unique names, sizes and solutions present, and every cost
// model evaluates on the H200 spec sheet; the collective cost models against hand-computed values.
#include <gtest/gtest.h>

#include <set>

#include "bench/problem.hpp"
#include "core/error.hpp"
#include "core/hardware_profile.hpp"
#include "problems/peer_collective.hpp"
#include "problems/registry.hpp"
#include "roofline/roofline.hpp"

namespace kiln::bench {
namespace {

const Problem& problem(const std::string& name) {
  for (const auto& p : problems::problem_registry())
    if (p->name() == name) return *p;
  throw std::runtime_error("no problem " + name);
}

TEST(ProblemRegistry, NamesSizesSolutionsAndCostModels) {
  const roofline::Ceilings h200 = roofline::ceilings_from_profile(core::find_profile("h200-sxm"));
  std::set<std::string> names;
  ASSERT_FALSE(problems::problem_registry().empty());
  for (const auto& p : problems::problem_registry()) {
    EXPECT_TRUE(names.insert(p->name()).second) << "duplicate " << p->name();
    EXPECT_NE(category_name(p->category()), "?");
    EXPECT_FALSE(p->sizes().empty()) << p->name();
    EXPECT_FALSE(p->solutions().empty()) << p->name();
    for (const ProblemSize& s : p->sizes()) {
      for (int world : {2, 4, 8}) {
        const roofline::RooflineResult r =
            roofline::evaluate(p->cost(s, core::DType::kBf16, world), h200);
        EXPECT_GT(r.seconds, 0.0) << p->name() << " " << s.name;
      }
    }
  }
}

TEST(ProblemRegistry, CollectiveCostsAreTheBusVolumes) {
  const roofline::Ceilings h100 = roofline::ceilings_from_profile(core::find_profile("h100-sxm"));
  const ProblemSize one_mib{"1M", {{"bytes_per_rank", 1 << 20}}};
  // allgather, 4 ranks, 1 MiB each: 3 MiB over the links at 450 GB/s = 6.99 us; 8 MiB of HBM
  // traffic at 3350 GB/s = 2.50 us: interconnect-bound.
  const auto ag =
      roofline::evaluate(problem("allgather").cost(one_mib, core::DType::kBf16, 4), h100);
  EXPECT_NEAR(ag.seconds * 1e6, 3.0 * (1 << 20) / 450e9 * 1e6, 1e-9);
  EXPECT_EQ(ag.binding, roofline::Resource::kInterconnect);
  EXPECT_NEAR(ag.phases[0].memory_seconds * 1e6, 8.0 * (1 << 20) / 3350e9 * 1e6, 1e-9);
  // alltoall, 4 ranks, 1 MiB sent by each: 3/4 MiB over the links.
  const auto a2a =
      roofline::evaluate(problem("alltoall").cost(one_mib, core::DType::kBf16, 4), h100);
  EXPECT_NEAR(a2a.seconds * 1e6, 0.75 * (1 << 20) / 450e9 * 1e6, 1e-9);
  // allreduce, 4 ranks, 1 MiB: the ring's 2*3/4 MiB over the links.
  const auto ar =
      roofline::evaluate(problem("allreduce").cost(one_mib, core::DType::kBf16, 4), h100);
  EXPECT_NEAR(ar.seconds * 1e6, 1.5 * (1 << 20) / 450e9 * 1e6, 1e-9);
  // broadcast: the whole vector reaches every other GPU.
  const auto bc =
      roofline::evaluate(problem("broadcast").cost(one_mib, core::DType::kBf16, 4), h100);
  EXPECT_NEAR(bc.seconds * 1e6, 1.0 * (1 << 20) / 450e9 * 1e6, 1e-9);
}

TEST(ProblemRegistry, TensorParallelGemmCostsAreOneOverlappablePhase) {
  const roofline::Ceilings h100 = roofline::ceilings_from_profile(core::find_profile("h100-sxm"));
  const ProblemSize shape{"8192x8192x8192", {{"m", 8192}, {"n", 8192}, {"k", 8192}}};
  const double gemm_us = 2.0 * 8192 * 8192 * 8192 / 989.4e12 * 1e6;  // 1111.3 us
  // GEMM + all-reduce, 4 ranks: 2*3/4 of the 128 MiB output over the links = 447.4 us; the
  // GEMM's 1111.3 us binds; one phase, so the sum is not taken.
  const auto ar =
      roofline::evaluate(problem("tp-gemm-allreduce").cost(shape, core::DType::kBf16, 4), h100);
  ASSERT_EQ(ar.phases.size(), 1u);
  EXPECT_NEAR(ar.seconds * 1e6, gemm_us, 1e-6);
  EXPECT_EQ(ar.binding, roofline::Resource::kCompute);
  EXPECT_NEAR(ar.phases[0].interconnect_seconds * 1e6, 1.5 * 128 * (1 << 20) / 450e9 * 1e6, 1e-6);
  // GEMM + reduce-scatter: 3/4 of it; HBM adds the partial read and the share written.
  const auto rs =
      roofline::evaluate(problem("tp-gemm-reducescatter").cost(shape, core::DType::kBf16, 4), h100);
  EXPECT_NEAR(rs.phases[0].interconnect_seconds * 1e6, 0.75 * 128 * (1 << 20) / 450e9 * 1e6, 1e-6);
  const double rs_hbm = 2.0 * 3 * 8192 * 8192 + 2.0 * 8192 * 8192 * 1.25;
  EXPECT_NEAR(rs.phases[0].memory_seconds * 1e6, rs_hbm / 3350e9 * 1e6, 1e-6);
  // All-gather + GEMM: 3/4 of the gathered 128 MiB of A over the links.
  const auto ag =
      roofline::evaluate(problem("tp-allgather-gemm").cost(shape, core::DType::kBf16, 4), h100);
  EXPECT_NEAR(ag.phases[0].interconnect_seconds * 1e6, 0.75 * 128 * (1 << 20) / 450e9 * 1e6, 1e-6);
  EXPECT_NEAR(ag.seconds * 1e6, gemm_us, 1e-6);
}

TEST(ProblemRegistry, UlyssesCostIsAnAllToAllOfTheShard) {
  const roofline::Ceilings h100 = roofline::ceilings_from_profile(core::find_profile("h100-sxm"));
  // S = 4096, 32 heads of 128, bf16, 4 ranks: a 1024 x 3 x 32 x 128 x 2 = 24 MiB shard; 3/4 of
  // it crosses the links (41.9 us at 450 GB/s); 48 MiB of HBM traffic (15.0 us).
  const ProblemSize s{"S4K-h32", {{"seq", 4096}, {"heads", 32}, {"head_dim", 128}}};
  const auto u =
      roofline::evaluate(problem("ulysses-qkv-a2a").cost(s, core::DType::kBf16, 4), h100);
  const double shard = 1024.0 * 3 * 32 * 128 * 2;
  EXPECT_NEAR(u.seconds * 1e6, 0.75 * shard / 450e9 * 1e6, 1e-6);
  EXPECT_NEAR(u.phases[0].memory_seconds * 1e6, 2 * shard / 3350e9 * 1e6, 1e-6);
  EXPECT_EQ(u.binding, roofline::Resource::kInterconnect);
}

TEST(ProblemRegistry, SelectByGlobAndRejectUnknownNames) {
  EXPECT_EQ(select_problems(problems::problem_registry(), {}).size(),
            problems::problem_registry().size());
  const auto all_prefix = select_problems(problems::problem_registry(), {"all*"});
  ASSERT_EQ(all_prefix.size(), 3u);
  EXPECT_EQ(all_prefix[0]->name(), "allreduce");
  EXPECT_EQ(select_problems(problems::problem_registry(), {"scatter", "broad*"}).size(), 2u);
  EXPECT_THROW(select_problems(problems::problem_registry(), {"nope*"}), UsageError);
}

// 16 KiB of bf16 split over 3 ranks is 5460-byte blocks: not whole 16-byte vectors, so the suite
// skips that row instead of failing mid-trial.
TEST(ProblemRegistry, BlocksThatAreNotWholeVectorsAreRejectedUpFront) {
  const ProblemSize small{"16K", {{"bytes_per_rank", 16 << 10}}};
  EXPECT_THROW(problems::require_whole_blocks(16 << 10, 2, 3, small, "reducescatter"), UsageError);
  EXPECT_NO_THROW(problems::require_whole_blocks(16 << 10, 2, 4, small, "reducescatter"));
  EXPECT_NO_THROW(problems::require_whole_vectors((16 << 10) / 4, small, "scatter", 4));
  EXPECT_THROW(problems::require_whole_vectors(0, small, "scatter", 4), UsageError);
}

}  // namespace
}  // namespace kiln::bench
