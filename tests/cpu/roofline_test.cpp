// The phase-aware roofline and the suite metrics against hand-computed values, including
// ParallelKernelBench's worked example (Hyena conv1d with halo exchange on H100 specs).
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/hardware_profile.hpp"
#include "roofline/bus_volume.hpp"
#include "roofline/metrics.hpp"
#include "roofline/roofline.hpp"

namespace kiln::roofline {
namespace {

Ceilings h100() {
  return ceilings_from_profile(core::find_profile("h100-sxm"));
}

// ParallelKernelBench's worked example: Hyena conv1d with a halo exchange, B=1, H=1024, K=7,
// S=1024, W=4, bf16, on H100 specs: 438 ns compute, 2508 ns HBM, 55 ns communication, so
// T_roof ~ 2.51 us and memory-bound. The counts below are the ones that give those times with the
// spec sheet (66.9 TFLOP/s fp32, 3350 GB/s, 450 GB/s per direction): 4·B·H·S·K FLOPs on CUDA
// cores, four B·H·S bf16 tensors plus the H·K bf16 filter through HBM, and 2·(K-1)·B·H bf16
// halo elements over NVLink. (PKB's own source was not at hand; its published times were.)
TEST(Roofline, ParallelKernelBenchHyenaExample) {
  const double B = 1, H = 1024, K = 7, S = 1024;
  Stage conv{"conv1d", 4 * B * H * S * K, Precision::kFp32, 4 * B * H * S * 2 + H * K * 2, 0};
  Stage halo{"halo exchange", 0, Precision::kFp32, 0, 2 * (K - 1) * B * H * 2};
  const RooflineResult r = evaluate({{{"conv with halo", {conv, halo}}}}, h100());
  ASSERT_EQ(r.phases.size(), 1u);
  EXPECT_NEAR(r.phases[0].compute_seconds * 1e9, 438, 1.0);
  EXPECT_NEAR(r.phases[0].memory_seconds * 1e9, 2508, 1.0);
  EXPECT_NEAR(r.phases[0].interconnect_seconds * 1e9, 55, 0.5);
  EXPECT_NEAR(r.seconds * 1e6, 2.51, 0.005);
  EXPECT_EQ(r.binding, Resource::kMemory);
}

TEST(Roofline, PhasesAddTheirBusiestResource) {
  Ceilings c;
  c.flops_per_second[static_cast<int>(Precision::kBf16Tensor)] = 1e15;
  c.hbm_bytes_per_second = 1e12;
  c.comm_bytes_per_second = 1e11;
  c.source = "test";
  // Phase 1: 2e12 FLOPs (2 ms) vs 1e9 bytes (1 ms): compute-bound, 2 ms.
  // Phase 2: 1e8 comm bytes (1 ms) vs 5e8 HBM bytes (0.5 ms): interconnect-bound, 1 ms.
  CostModel m{{{"gemm", {{"mm", 2e12, Precision::kBf16Tensor, 1e9, 0}}},
               {"allreduce", {{"ar", 0, Precision::kFp32, 5e8, 1e8}}}}};
  const RooflineResult r = evaluate(m, c);
  EXPECT_DOUBLE_EQ(r.phases[0].seconds, 2e-3);
  EXPECT_EQ(r.phases[0].binding, Resource::kCompute);
  EXPECT_DOUBLE_EQ(r.phases[1].seconds, 1e-3);
  EXPECT_EQ(r.phases[1].binding, Resource::kInterconnect);
  EXPECT_DOUBLE_EQ(r.seconds, 3e-3);
  EXPECT_EQ(r.binding, Resource::kCompute);  // 2 of the 3 ms
  // Stages within one phase add up before the max: two 1 ms memory stages make 2 ms.
  CostModel two{{{"p", {{"a", 0, Precision::kFp32, 1e9, 0}, {"b", 0, Precision::kFp32, 1e9, 0}}}}};
  EXPECT_DOUBLE_EQ(evaluate(two, c).seconds, 2e-3);
}

TEST(Roofline, MissingCeilingsAndNegativeQuantitiesAreErrors) {
  Ceilings c = h100();
  c.flops_per_second[static_cast<int>(Precision::kFp8Tensor)] = 0;
  EXPECT_THROW(evaluate({{{"p", {{"s", 1, Precision::kFp8Tensor, 0, 0}}}}}, c), Error);
  EXPECT_THROW(evaluate({{{"p", {{"s", -1, Precision::kFp32, 0, 0}}}}}, c), Error);
  c.comm_bytes_per_second = 0;
  EXPECT_THROW(evaluate({{{"p", {{"s", 0, Precision::kFp32, 0, 10}}}}}, c), Error);
}

TEST(Roofline, BusVolumeOfAnAllGatherIsTheRingFormula) {
  // (W-1)/W of the gathered bytes cross each GPU's links.
  EXPECT_DOUBLE_EQ(bus_bytes(comm::CollectiveOp::kAllGather, 4e6, 4), 3e6);
  EXPECT_DOUBLE_EQ(bus_bytes(comm::CollectiveOp::kAllReduce, 4e6, 4), 6e6);
  EXPECT_DOUBLE_EQ(bus_bytes(comm::CollectiveOp::kBroadcast, 4e6, 4), 4e6);
}

TEST(Metrics, FastPAndRoofU) {
  // a: correct, 2x faster, U = 0.8; b: correct, 0.9x (slower), U = 0.3; c: wrong, 5x faster.
  const std::vector<ProblemOutcome> o = {
      {"a", true, 1.0, 2.0, 0.8}, {"b", true, 1.0, 0.9, 0.3}, {"c", false, 1.0, 5.0, 1.0}};
  EXPECT_DOUBLE_EQ(fast_p(o, 0.0), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(fast_p(o, 1.0), 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(fast_p(o, 2.0), 1.0 / 3.0);  // exactly 2x counts
  EXPECT_DOUBLE_EQ(fast_p(o, 2.1), 0.0);
  EXPECT_DOUBLE_EQ(roof_u(o, 0.5), 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(roof_u(o, 0.0), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(roof_u(o, 0.8), 0.0);  // strictly above u
  EXPECT_DOUBLE_EQ(utilization(2.0, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(utilization(0.5, 1.0), 0.5);
  EXPECT_THROW(fast_p({}, 1.0), Error);
}

}  // namespace
}  // namespace kiln::roofline
