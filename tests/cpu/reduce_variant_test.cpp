// Reduction knobs without a GPU: presets, validation reasons, printing and parsing, and the launch
// and workspace arithmetic (heads and tails of misaligned inputs, grid sizes, pass counts).
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "kernels/reduce_variant.hpp"

namespace kiln::kernels {
namespace {

using core::DType;

const ReduceVariant& preset(const std::string& name) {
  for (const ReduceVariant& v : reduce_presets())
    if (v.name == name) return v;
  throw std::runtime_error("no preset " + name);
}

TEST(ReduceVariant, EveryPresetReducesInt32Sum) {
  for (const ReduceVariant& v : reduce_presets()) {
    EXPECT_FALSE(invalid_reason(v, DType::kInt32, ReduceOp::kSum).has_value()) << v.name;
  }
}

TEST(ReduceVariant, TheLadderAddsOneKnobPerStep) {
  EXPECT_EQ(preset("v1").addressing, Addressing::kInterleaved);
  EXPECT_EQ(preset("v2a").addressing, Addressing::kSequential);
  EXPECT_EQ(preset("v2a").workspace, Workspace::kGlobal);
  EXPECT_EQ(preset("v2b").workspace, Workspace::kShared);
  EXPECT_EQ(preset("v2b").items, 1);
  EXPECT_EQ(preset("v2c").items, 2);
  EXPECT_EQ(preset("v2c").tail, WarpTail::kNone);
  EXPECT_EQ(preset("v3a").tail, WarpTail::kUnrolled);
  EXPECT_EQ(preset("v3b").tail, WarpTail::kShuffle);
  EXPECT_FALSE(preset("v3b").complete_unroll);
  EXPECT_TRUE(preset("v4").complete_unroll);
  for (const char* name : {"v1", "v2a", "v2b", "v2c", "v3a", "v3b", "v4"}) {
    EXPECT_EQ(preset(name).block, 1024) << name;  // the study's block
    EXPECT_EQ(preset(name).grid, GridMode::kTiles) << name;
    EXPECT_EQ(preset(name).completion, Completion::kMultiPass) << name;
  }
}

TEST(ReduceVariant, PrintsAndParsesTheSameKnobs) {
  for (const ReduceVariant& v : reduce_presets()) {
    const ReduceVariant back = parse_reduce_variant(to_string(v), "--variants");
    EXPECT_EQ(to_string(back), to_string(v)) << v.name;
    EXPECT_EQ(parse_reduce_variant(v.name, "--variants").name, v.name);
  }
  const ReduceVariant partial = parse_reduce_variant("block=128 items=8", "--variants");
  EXPECT_EQ(partial.block, 128);
  EXPECT_EQ(partial.items, 8);
  EXPECT_EQ(partial.vector_bytes, ReduceVariant{}.vector_bytes);
}

TEST(ReduceVariant, ParseErrorsNameTheFieldAndTheAcceptedValues) {
  const auto message = [](const std::string& text) {
    try {
      parse_reduce_variant(text, "--variants");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("tail=fast").find("accepted none, unrolled, shuffle, warp"), std::string::npos);
  EXPECT_NE(message("colour=red").find("unknown field 'colour'"), std::string::npos);
  EXPECT_NE(message("block=x").find("not an integer"), std::string::npos);
  EXPECT_NE(message("v9").find("not a preset"), std::string::npos);
}

TEST(ReduceVariant, InvalidCombinationsComeWithAReason) {
  const auto reason = [](ReduceVariant v, DType dtype = DType::kInt32,
                         ReduceOp op = ReduceOp::kSum) {
    const auto r = invalid_reason(v, dtype, op);
    return r ? *r : std::string();
  };
  ReduceVariant v;
  v.block = 100;
  EXPECT_NE(reason(v).find("power of two"), std::string::npos);
  v = ReduceVariant{};
  v.block = 32;
  EXPECT_NE(reason(v).find("64..1024"), std::string::npos);
  v = ReduceVariant{};
  v.items = 3;
  EXPECT_NE(reason(v).find("items=3"), std::string::npos);
  v = ReduceVariant{};
  v.vector_bytes = 8;
  EXPECT_NE(reason(v).find("vector=8"), std::string::npos);
  v = ReduceVariant{};
  v.vector_bytes = 4;
  v.items = 4;
  EXPECT_NE(reason(v).find("scalar loads"), std::string::npos);
  v = preset("v1");
  v.tail = WarpTail::kShuffle;
  EXPECT_NE(reason(v).find("workspace=global"), std::string::npos);
  v = preset("v2b");
  v.addressing = Addressing::kInterleaved;
  v.tail = WarpTail::kShuffle;
  EXPECT_NE(reason(v).find("addressing=interleaved"), std::string::npos);
  v = preset("v4");
  v.block = 128;
  EXPECT_NE(reason(v).find("complete unrolling"), std::string::npos);
  EXPECT_NE(reason(preset("vec-atomic"), DType::kFp32, ReduceOp::kMin).find("atomic"),
            std::string::npos);
  EXPECT_EQ(reason(preset("vec-atomic"), DType::kInt32, ReduceOp::kMin), "");
  EXPECT_EQ(reason(preset("vec-atomic"), DType::kBf16, ReduceOp::kSum), "");
}

TEST(ReduceLaunchPlan, MisalignedStartsGetAScalarHeadAndTail) {
  ReduceVariant v = preset("vec");  // 16-byte loads, 512 x 4 per tile
  // bf16 starting 2 bytes after a 16-byte boundary: 7 elements to the boundary.
  ReduceLaunch l = plan_reduce_launch(v, 2, 0x1002, 100, 1000);
  EXPECT_EQ(l.vector_elements, 8);
  EXPECT_EQ(l.head, 7);
  EXPECT_EQ(l.vectors, 11);  // (100 - 7) / 8
  EXPECT_EQ(l.tail, 100 - 7 - 88);
  // Fewer elements than the head: everything is head.
  l = plan_reduce_launch(v, 2, 0x1002, 3, 1000);
  EXPECT_EQ(l.head, 3);
  EXPECT_EQ(l.vectors, 0);
  EXPECT_EQ(l.tail, 0);
  EXPECT_EQ(l.blocks, 1);
  // Aligned int32: no head.
  l = plan_reduce_launch(v, 4, 0x2000, 1025, 1000);
  EXPECT_EQ(l.head, 0);
  EXPECT_EQ(l.vectors, 256);
  EXPECT_EQ(l.tail, 1);
  // Scalar loads: every element is a load.
  l = plan_reduce_launch(preset("v1"), 4, 0x2004, 1025, 1000);
  EXPECT_EQ(l.head, 0);
  EXPECT_EQ(l.vectors, 1025);
  EXPECT_EQ(l.blocks, 2);  // tiles of 1024
  // Scalar loads of a 2-byte type: still one element per load (the kernel's kElems = 1).
  l = plan_reduce_launch(preset("v2c"), 2, 0x2002, 4097, 1000);
  EXPECT_EQ(l.vector_elements, 1);
  EXPECT_EQ(l.vectors, 4097);
  EXPECT_EQ(l.blocks, 3);  // tiles of 1024 x 2
}

TEST(ReduceLaunchPlan, PersistentGridsStopAtTheResidentBlocks) {
  const ReduceVariant v = preset("vec");
  // 1e9 int32: 2.5e8 loads, tiles of 2048 loads -> 122071 tiles, capped at 264 resident blocks.
  EXPECT_EQ(plan_reduce_launch(v, 4, 0, 1000000000, 264).blocks, 264);
  EXPECT_EQ(plan_reduce_launch(v, 4, 0, 4000, 264).blocks, 1);
  ReduceVariant tiles = v;
  tiles.grid = GridMode::kTiles;
  EXPECT_EQ(plan_reduce_launch(tiles, 4, 0, 1000000000, 264).blocks, 122071);
}

TEST(ReduceLaunchPlan, MultiPassCountsAndWorkspace) {
  const ReduceVariant v1 = preset("v1");
  // 1e9 -> 976563 blocks -> 954 -> 1: three passes.
  EXPECT_EQ(multi_pass_count(v1, 4, 1000000000, 264), 3);
  EXPECT_EQ(multi_pass_count(v1, 4, 1024, 264), 1);
  EXPECT_EQ(multi_pass_count(v1, 4, 1025, 264), 2);
  const ReduceWorkspaceLayout w = plan_reduce_workspace(v1, 4, 1000000000, 264);
  EXPECT_GE(w.partials_offset[1] - w.partials_offset[0], 976563u * 4);
  EXPECT_GE(w.scratch_offset - w.partials_offset[1], 954u * 4);
  EXPECT_EQ(w.total_bytes - w.scratch_offset, (976563ull * 1024 * 4 + 255) / 256 * 256);
  const ReduceWorkspaceLayout shared = plan_reduce_workspace(preset("vec"), 4, 1000000000, 264);
  EXPECT_EQ(shared.total_bytes, shared.scratch_offset);  // no global scratch
}

}  // namespace
}  // namespace kiln::kernels
