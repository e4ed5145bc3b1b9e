// ReduceScatter to contiguous row blocks (OverlapOptions::contiguous_rows, slot_layout.hpp): rank
// j's output must be rows [j*M/world, (j+1)*M/world) of the summed product, for every kernel kind
// (cooperative, ping-pong, split-N, ping-pong on Cᵀ, 256-row tiles and tile heights that are not
// powers of two), eager and deferred signals, several groupings,
// NCCL and copy engines, and both weight layouts, checked against cuBLAS + NCCL AllReduce on fresh
// random inputs, with restore and fused RMSNorm over three runs (the counters' epochs). The
// placement must not depend on the grouping, so the same inputs run under every plan. Also the
// layout's refusals.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "core/device_buffer.hpp"
#include "core/error.hpp"
#include "core/fill.hpp"
#include "core/stream.hpp"
#include "device_compare.hpp"
#include "gemm_allreduce_case.hpp"
#include "gpu_availability.hpp"
#include "overlap/cublas_gemm.hpp"
#include "overlap/gemm_collective.hpp"
#include "rank_failures.hpp"

namespace {

using namespace kiln;
using overlap::GemmShape;

int check_contiguous_rows(const comm::RankInfo& info) {
  comm::Communicator comm(info, 60.0);
  core::Stream stream;
  overlap::CublasGemm cublas;
  kiln::testing::RankFailures fail(comm.rank());
  const int world = comm.size();
  // M a multiple of world x 256 (every power-of-two tile height), or of world x 2880 (the 144-,
  // 160- and 192-row tiles); N not a multiple of any tile width. A plan runs on the shapes whose M
  // splits into its whole tiles per rank, and must run on at least one.
  const std::vector<GemmShape> shapes = {
      {256 * world, 264, 136}, {1024 * world, 1000, 256}, {2880 * world, 264, 136}};
  const std::vector<std::string> plans = {
      "tile=128x256 raster=m swizzle=1 groups=each",
      "tile=128x128 cap=6 raster=m swizzle=2 signal=deferred groups=each",
      "tile=128x128 cap=16 swizzle=4",
      "tile=256x128 cluster=1x2 raster=m swizzle=2 groups=each",
      "tile=128x128 cluster=2x1 kernel=pingpong cap=6 raster=m swizzle=2 groups=each",
      "tile=128x192 cluster=2x1 kernel=pingpong raster=m signal=deferred",
      "tile=64x256 cluster=1x1 kernel=pingpong cap=5 swizzle=4 groups=each",
      "tile=128x320 kernel=coop-n cap=10 raster=m swizzle=2 groups=each",
      "tile=128x144 cluster=2x1 kernel=pingpong cap=6 swizzle=2 groups=each",
      // Tile heights that are not powers of two (subtile_of_row's division form).
      "tile=192x128 cluster=2x1 kernel=pingpong raster=m swizzle=2 groups=each",
      "tile=144x128 cluster=1x2 kernel=pingpong-swap raster=n signal=deferred groups=each",
      "tile=160x128 cluster=1x2 kernel=pingpong-swap cap=10 raster=n swizzle=2",
  };
  std::vector<std::string> all_plans = plans;
  if (world >= 2) {
    // Copy engines instead of NCCL (the reorder adds the peers' parts to this rank's own tiles,
    // read from the slot buffer through the column groups).
    all_plans.push_back("tile=128x256 cap=0 raster=m comm=ce groups=each");
    all_plans.push_back("tile=128x128 cap=16 raster=m swizzle=2 signal=deferred comm=ce");
    all_plans.push_back("tile=144x128 cluster=1x2 kernel=pingpong-swap raster=n comm=ce");
  }
  std::vector<int> shapes_run(all_plans.size(), 0);
  std::uint64_t seed = 5000 * world + 3;
  for (const GemmShape& shape : shapes) {
    for (overlap::WeightLayout layout : {overlap::WeightLayout::kNK, overlap::WeightLayout::kKN}) {
      kiln::testing::GemmAllReduceCase c(comm, stream, cublas, shape, layout, seed);
      core::DeviceBuffer& out = c.out;
      const overlap::MatrixRef a_ref = c.a_ref, b_ref = c.b_ref, w_ref = c.w_ref;
      const int q = shape.m / world;
      for (std::size_t p = 0; p < all_plans.size(); ++p) {
        const std::string& text = all_plans[p];
        const overlap::Plan plan = overlap::parse_plan(text, "plan");
        if (shape.m % (world * plan.gemm.tile.m) != 0) continue;
        ++shapes_run[p];
        const std::string label = fmt::format("contiguous rs {}x{}x{} {} [{}]", shape.m, shape.n,
                                              shape.k, overlap::weight_layout_name(layout), text);
        overlap::OverlapOptions options;
        options.contiguous_rows = true;
        overlap::GemmCollective gc(overlap::OverlapOp::kReduceScatter, shape, core::DType::kBf16,
                                   layout, comm, plan, options);
        if (gc.output_rows() != q) {
          fail(fmt::format("{}: {} output rows, {} expected", label, gc.output_rows(), q));
          continue;
        }
        if (gc.global_row(0) != comm.rank() * q ||
            gc.global_row(q - 1) != (comm.rank() + 1) * q - 1)
          fail(label + ": global_row is not the contiguous block");
        const overlap::MutableMatrixRef out_ref{out.data(), core::DType::kBf16, q, shape.n};
        for (int run = 0; run < 3; ++run) {
          core::poison(out.data(), out.bytes(), stream);
          if (run < 2)
            gc.run(a_ref, b_ref, out_ref, stream);
          else
            gc.run_rmsnorm(a_ref, b_ref, w_ref, 1e-5f, out_ref, stream);
          comm.wait(stream, label);
          const std::vector<float> got =
              kiln::testing::download_floats(out.data(), std::size_t(q) * shape.n);
          std::vector<float> expect(got.size());
          for (int lr = 0; lr < q; ++lr) {
            const std::vector<float> row = c.expected_row(comm.rank() * q + lr, run == 2);
            std::copy(row.begin(), row.end(), expect.begin() + std::size_t(lr) * shape.n);
          }
          const double error = kiln::testing::relative_error(got, expect);
          if (!(error <= 1e-2))
            fail(fmt::format("{} run {}: relative error {}", label, run, error));
        }
      }
    }
  }
  for (std::size_t p = 0; p < all_plans.size(); ++p) {
    if (shapes_run[p] == 0) fail(all_plans[p] + ": no shape of whole tiles per rank ran it");
  }
  return fail.exit_code();
}

// The layout's own refusals, each a UsageError that names the rule.
int check_contiguous_refusals(const comm::RankInfo& info) {
  comm::Communicator comm(info, 60.0);
  int failures = 0;
  overlap::OverlapOptions options;
  options.contiguous_rows = true;
  const auto expect_usage_error = [&](const char* what, overlap::OverlapOp op, GemmShape shape,
                                      const char* plan) {
    try {
      overlap::GemmCollective gc(op, shape, core::DType::kBf16, overlap::WeightLayout::kNK, comm,
                                 overlap::parse_plan(plan, "plan"), options);
      std::fprintf(stderr, "%s: no error\n", what);
      ++failures;
    } catch (const UsageError& e) {
      std::fprintf(stderr, "%s: %s\n", what, e.what());
    }
  };
  const int world = comm.size();
  expect_usage_error("M not a multiple of world x BM", overlap::OverlapOp::kReduceScatter,
                     {128 * world + 64, 256, 64}, "tile=128x256");
  expect_usage_error("AllReduce", overlap::OverlapOp::kAllReduce, {256 * world, 256, 64},
                     "tile=128x256");
  return failures == 0 ? 0 : 1;
}

void run_ranks(int world, const std::function<int(const comm::RankInfo&)>& body) {
  const int code = kiln::testing::launch_test_ranks(world, body, comm::LaunchOptions{});
  EXPECT_EQ(code, 0) << "a rank reported a failure (see stderr)";
}

TEST(OverlapContiguousRowsGpu, OneRank) {
  KILN_SKIP_UNLESS_GPUS(1);
  run_ranks(1, check_contiguous_rows);
}
TEST(OverlapContiguousRowsGpu, TwoRanks) {
  KILN_SKIP_UNLESS_RANKS(2);
  run_ranks(2, check_contiguous_rows);
}
TEST(OverlapContiguousRowsGpu, FourRanks) {
  KILN_SKIP_UNLESS_RANKS(4);
  run_ranks(4, check_contiguous_rows);
}
TEST(OverlapContiguousRowsGpu, RefusalsTwoRanks) {
  KILN_SKIP_UNLESS_RANKS(2);
  run_ranks(2, check_contiguous_refusals);
}

}  // namespace
