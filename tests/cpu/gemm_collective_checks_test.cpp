// GemmCollective's host-side steps without a GPU: can_implement names what cannot run,
// workspace_bytes sizes what the constructor will allocate, and which plans run() executes as the
// serial baseline (cuBLAS + one NCCL call).
#include <gtest/gtest.h>

#include <string>

#include "overlap/gemm_collective.hpp"

namespace kiln::overlap {
namespace {

constexpr auto kRs = OverlapOp::kReduceScatter;
constexpr auto kAr = OverlapOp::kAllReduce;
constexpr auto kBf16 = core::DType::kBf16;

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(GemmCollectiveChecks, CanImplementSaysWhyNot) {
  const Plan plan;
  EXPECT_EQ(GemmCollective::can_implement(kRs, {4096, 8192, 8192}, kBf16, plan, 2), "");
  EXPECT_EQ(GemmCollective::can_implement(kAr, {4096, 8192, 8192}, kBf16, plan, 3), "");
  EXPECT_TRUE(mentions(GemmCollective::can_implement(kAr, {4096, 8192, 8190}, kBf16, plan, 2),
                       "multiples of 8"));
  EXPECT_TRUE(
      mentions(GemmCollective::can_implement(kAr, {0, 8192, 8192}, kBf16, plan, 2), "positive"));
  EXPECT_TRUE(
      mentions(GemmCollective::can_implement(kAr, {4096, 8192, 8192}, core::DType::kFp32, plan, 2),
               "bf16 or fp16"));
  EXPECT_TRUE(mentions(GemmCollective::can_implement(kRs, {4096, 8192, 8192}, kBf16, plan, 3),
                       "power of two"));
  Plan odd_tile = plan;
  odd_tile.gemm.tile = {64, 64};
  EXPECT_TRUE(mentions(GemmCollective::can_implement(kAr, {4096, 8192, 8192}, kBf16, odd_tile, 2),
                       "not built"));
  Plan bad_groups = plan;
  bad_groups.partition = {1, 1};  // 4096x8192 in 128x256 tiles on 132 SMs is 8 waves
  EXPECT_EQ(GemmCollective::can_implement(kAr, {4096, 8192, 8192}, kBf16, bad_groups, 2), "");
  EXPECT_NE(GemmCollective::can_implement(kAr, {4096, 8192, 8192}, kBf16, bad_groups, 2, 132), "");
}

TEST(GemmCollectiveChecks, WorkspaceBytesCountTheBuffersOfEachTransport) {
  const GemmShape shape{4096, 8192, 8192};
  const std::size_t output = std::size_t(shape.m) * shape.n * 2;
  Plan nccl;
  Plan ce;
  ce.copy_engine = true;
  const std::size_t ar_nccl = GemmCollective::workspace_bytes(kAr, shape, kBf16, nccl, 2, 132);
  const std::size_t rs_nccl = GemmCollective::workspace_bytes(kRs, shape, kBf16, nccl, 2, 132);
  const std::size_t ar_ce = GemmCollective::workspace_bytes(kAr, shape, kBf16, ce, 2, 132);
  // The slot buffer holds at least the output; ReduceScatter adds its received half; copy
  // engines add one region per rank (AllReduce: whole tiles).
  EXPECT_GE(ar_nccl, output);
  EXPECT_LT(ar_nccl, output + output / 8);
  EXPECT_GE(rs_nccl, ar_nccl + output / 2);
  EXPECT_GE(ar_ce, ar_nccl + 2 * output);
  EXPECT_THROW(GemmCollective::workspace_bytes(kRs, shape, kBf16, nccl, 3, 132), UsageError);
}

TEST(GemmCollectiveChecks, TwoPhaseCopyEngineAllReduce) {
  // The plan text round-trips, and ce2 is a copy-engine plan.
  const Plan ce2 = parse_plan("tile=128x256 cap=128 comm=ce2 groups=each", "t");
  EXPECT_TRUE(ce2.copy_engine);
  EXPECT_TRUE(ce2.two_phase);
  EXPECT_EQ(transport_name(ce2), "ce2");
  EXPECT_TRUE(mentions(to_string(ce2), "comm=ce2"));
  EXPECT_EQ(to_string(parse_plan(to_string(ce2), "t")), to_string(ce2));
  try {
    parse_plan("tile=128x256 comm=ce3", "--plan");
    ADD_FAILURE() << "comm=ce3 accepted";
  } catch (const UsageError& e) {
    EXPECT_TRUE(mentions(e.what(), "accepted nccl, ce, ce2")) << e.what();
  }
  // AllReduce only; the owners' subtiles need a power-of-two world dividing the tile's rows.
  const GemmShape shape{4096, 8192, 8192};
  EXPECT_EQ(GemmCollective::can_implement(kAr, shape, kBf16, ce2, 2), "");
  EXPECT_EQ(GemmCollective::can_implement(kAr, shape, kBf16, ce2, 4), "");
  EXPECT_EQ(GemmCollective::can_implement(kAr, shape, kBf16, ce2, 8), "");
  EXPECT_TRUE(mentions(GemmCollective::can_implement(kRs, shape, kBf16, ce2, 2), "comm=ce2"));
  EXPECT_TRUE(mentions(GemmCollective::can_implement(kAr, shape, kBf16, ce2, 3), "power of two"));
  EXPECT_TRUE(mentions(GemmCollective::can_implement(kAr, shape, kBf16, ce2, 16), "at most 8"));
  // A 256-row tile divides into 16 subtiles of 16 rows, but the reductions hold 8 pointers.
  Plan tall = parse_plan("tile=256x128 cap=0 comm=ce groups=each", "t");
  EXPECT_TRUE(mentions(GemmCollective::can_implement(kRs, shape, kBf16, tall, 16), "at most 8"));
  tall.copy_engine = false;
  EXPECT_EQ(GemmCollective::can_implement(kRs, shape, kBf16, tall, 16), "");
  EXPECT_FALSE(GemmCollective::runs_serial_baseline(
      kAr, parse_plan("tile=128x256 cap=0 comm=ce2 groups=8", "t"), OverlapOptions{}));
  // Memory: the slot buffer, W first-phase regions of 1/W of it, the same for the second phase,
  // and this rank's reduced 1/W; comm=ce instead holds W regions of the whole output.
  Plan ce = ce2;
  ce.two_phase = false;
  const std::size_t output = std::size_t(shape.m) * shape.n * 2;
  for (const int world : {2, 4}) {
    const std::size_t two = GemmCollective::workspace_bytes(kAr, shape, kBf16, ce2, world, 132);
    const std::size_t one = GemmCollective::workspace_bytes(kAr, shape, kBf16, ce, world, 132);
    EXPECT_GE(two, output + 2 * output + output / world) << world;
    EXPECT_LT(two, output * 7 / 2 + output / 8) << world;
    EXPECT_GE(one, output * (world + 1)) << world;
  }
}

TEST(GemmCollectiveChecks, OnlySerialAllReducePlansRunAsTheBaseline) {
  Plan serial = parse_plan("tile=128x256 cap=0 comm=nccl groups=8", "t");
  ASSERT_TRUE(is_serial_plan(serial));
  const OverlapOptions plain;
  EXPECT_TRUE(GemmCollective::runs_serial_baseline(kAr, serial, plain));
  EXPECT_FALSE(GemmCollective::runs_serial_baseline(kRs, serial, plain));  // RS keeps its layout
  // Not the serial form: copy engines, a cap (NCCL beside the GEMM), or more than one group.
  for (const char* text : {"tile=128x256 cap=0 comm=ce groups=8", "tile=128x256 cap=128 groups=8",
                           "tile=128x256 cap=0 groups=4,4", "tile=128x256 cap=0 groups=each"}) {
    EXPECT_FALSE(GemmCollective::runs_serial_baseline(kAr, parse_plan(text, "t"), plain)) << text;
  }
  // What tests ask of the signaling path keeps it: a wrapped GEMM, a trace, poisoning, a delay.
  OverlapOptions o = plain;
  o.trace = true;
  EXPECT_FALSE(GemmCollective::runs_serial_baseline(kAr, serial, o));
  o = plain;
  o.wrap_gemm = [](std::unique_ptr<SignalingGemm> g) { return g; };
  EXPECT_FALSE(GemmCollective::runs_serial_baseline(kAr, serial, o));
  o = plain;
  o.poison_workspace_after_run = true;
  EXPECT_FALSE(GemmCollective::runs_serial_baseline(kAr, serial, o));
  o = plain;
  o.debug_signal_delay_ns = 100;
  EXPECT_FALSE(GemmCollective::runs_serial_baseline(kAr, serial, o));
  // Its cuBLAS workspace is counted: against the same single group beside a cap (8 waves of 128
  // tiles either way, so the same tables), exactly that much more.
  const GemmShape shape{4096, 8192, 8192};
  const Plan capped = parse_plan("tile=128x256 cap=128 groups=8", "t");
  EXPECT_EQ(GemmCollective::workspace_bytes(kAr, shape, kBf16, serial, 2, 132) -
                GemmCollective::workspace_bytes(kAr, shape, kBf16, capped, 2, 132),
            CublasGemm::kWorkspaceBytes);
}

}  // namespace
}  // namespace kiln::overlap
