// The pooling family's generator (issue 20) on the CPU: which problems it covers and their
// windows, random genomes of its allowed set, that the source follows the genome and the problem,
// and that every load path x work mapping compiles with nvcc and loads, on each pooling problem
// (shared-tile and register-sweep on the windows they take).
// The GPU test (EvolveGpu.PoolingFamilyGeneratesCompilesAndIsJudged) judges them.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "bench/candidate_library.hpp"
#include "core/error.hpp"
#include "evolve/candidate_evaluator.hpp"
#include "evolve/genome.hpp"
#include "evolve/pool_generator.hpp"
#include "evolve_generator_test_support.hpp"

namespace kiln::evolve {
namespace {

Genome pool_genome(std::vector<std::string> strategies) {
  Genome g;
  g.family = Family::kPooling;
  g.strategies = {strategies.begin(), strategies.end()};
  return g;
}

TEST(EvolvePoolGenerator, ThePoolingProblemsAndTheirWindows) {
  EXPECT_FALSE(pool_window_of("kb1-89-cumsum").has_value());
  const PoolWindow w43 = pool_window_of("kb1-43-maxpool-3d").value();
  EXPECT_TRUE(w43.max);
  EXPECT_EQ(w43.dims, 3);
  EXPECT_EQ(w43.kernel, 3);
  EXPECT_EQ(w43.stride, 2);
  EXPECT_EQ(w43.dilation, 3);
  const PoolWindow w45 = pool_window_of("kb1-45-avgpool-2d").value();
  EXPECT_FALSE(w45.max);
  EXPECT_EQ(w45.stride, 11);
  EXPECT_EQ(generated_family("kb1-41-maxpool-1d"), Family::kPooling);
  EXPECT_THROW(
      generate_pool_candidate(pool_genome({"scalar-loads", "element-per-thread"}), "kb1-19-relu"),
      UsageError);
}

TEST(EvolvePoolGenerator, RandomGenomesOfTheAllowedSetGenerate) {
  // Each problem's allowed set (sliding-planes only for the 3-D windows, register-sweep only for
  // stride 1, shared-tile not for 3-D).
  Rng rng(5);
  for (const char* problem : {"kb1-41-maxpool-1d", "kb1-42-maxpool-2d", "kb1-43-maxpool-3d",
                              "kb1-44-avgpool-1d", "kb1-45-avgpool-2d", "kb1-46-avgpool-3d"}) {
    const StrategySet& allowed = pool_generated_strategies(problem);
    for (int i = 0; i < 100; ++i) {
      const Genome g = random_genome(Family::kPooling, rng, 0.5, &allowed);
      ASSERT_TRUE(violations(g).empty()) << g.describe();
      for (const std::string& s : g.strategies) EXPECT_TRUE(allowed.count(s)) << s;
      EXPECT_NO_THROW((void)generate_pool_candidate(g, problem)) << problem << ": " << g.describe();
    }
  }
  EXPECT_THROW(generate_pool_candidate(pool_genome({"cp-async-pipeline", "element-per-thread"}),
                                       "kb1-42-maxpool-2d"),
               UsageError);
}

TEST(EvolvePoolGenerator, SourceFollowsTheGenomeAndTheProblem) {
  Genome vector = pool_genome({"vector16-loads", "grid-stride"});
  vector.knobs = {
      {"vector16-loads.unroll", 2}, {"grid-stride.threads", 128}, {"grid-stride.blocks_per_sm", 4}};
  const std::string v = generate_pool_candidate(vector, "kb1-46-avgpool-3d");
  EXPECT_NE(v.find("constexpr int kRun = 8;"), std::string::npos);
  EXPECT_NE(v.find("constexpr bool kMax = false;"), std::string::npos);
  EXPECT_NE(v.find("constexpr int kDims = 3;"), std::string::npos);
  EXPECT_NE(v.find("store_out4(yr + ow0"), std::string::npos);  // whole float4s where aligned
  EXPECT_NE(v.find("static_cast<long long>(sms) * 4"), std::string::npos);
  EXPECT_NE(v.find("constexpr bool kStreamStores = false;"), std::string::npos);
  EXPECT_NE(v.find("__launch_bounds__(128)"), std::string::npos);
  Genome scalar = pool_genome({"scalar-loads", "element-per-thread"});
  scalar.knobs = {{"scalar-loads.unroll", 2}};
  const std::string s = generate_pool_candidate(scalar, "kb1-41-maxpool-1d");
  EXPECT_NE(s.find("constexpr int kRun = 2;"), std::string::npos);
  EXPECT_NE(s.find("kKernel = 8, kStride = 1, kPadding = 4, kDilation = 3"), std::string::npos);
  EXPECT_EQ(s.find("store_out4(yr"), std::string::npos);
  EXPECT_NE(s.find("(items + 256 - 1) / 256"), std::string::npos);
  // cache-streaming: every mapping's stores go through store_out, evict-first.
  for (const auto& strategies : std::vector<std::vector<std::string>>{
           {"scalar-loads", "element-per-thread", "cache-streaming"},
           {"scalar-loads", "shared-tile", "cache-streaming"},
           {"scalar-loads", "warp-row-separable", "cache-streaming"}}) {
    const std::string c = generate_pool_candidate(pool_genome(strategies), "kb1-42-maxpool-2d");
    EXPECT_NE(c.find("constexpr bool kStreamStores = true;"), std::string::npos);
    EXPECT_NE(c.find("store_out(yr + "), std::string::npos);
  }
  const std::string sweep = generate_pool_candidate(
      pool_genome({"scalar-loads", "register-sweep", "cache-streaming"}), "kb1-44-avgpool-1d");
  EXPECT_NE(sweep.find("constexpr bool kStreamStores = true;"), std::string::npos);
}

TEST(EvolvePoolGenerator, EveryCombinationCompilesAndLoads) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "kiln_evolve_pool_generator";
  std::filesystem::create_directories(dir);
  const std::vector<std::string> problems = {"kb1-41-maxpool-1d", "kb1-42-maxpool-2d",
                                             "kb1-43-maxpool-3d", "kb1-44-avgpool-1d",
                                             "kb1-45-avgpool-2d", "kb1-46-avgpool-3d"};
  const std::vector<std::vector<std::string>> genomes = {
      {"scalar-loads", "element-per-thread"},
      {"vector16-loads", "grid-stride"},
      {"scalar-loads", "grid-stride", "persistent-grid"},
      {"vector16-loads", "grid-stride", "cache-streaming"}};
  for (std::size_t p = 0; p < problems.size(); ++p) {
    const Genome g = pool_genome(genomes[p % genomes.size()]);
    const std::filesystem::path file = dir / fmt::format("pool_{}.cu", p);
    std::ofstream(file) << generate_pool_candidate(g, problems[p]);
    bench::CandidateBuild build;
    ASSERT_NO_THROW(build = bench::compile_candidate(file.string(), dir.string(), "sm_90a", 300))
        << problems[p] << ": " << g.describe();
    EXPECT_NE(bench::CandidateLibrary(build.library).entry(), nullptr);
    expect_split_build(file, file.string());
  }
}

// shared-tile: the block's band follows the window (rows only for 2-D), a tile too large for
// shared memory shrinks, and 3-D windows are refused before anything compiles.
TEST(EvolvePoolGenerator, SharedTileFollowsTheWindow) {
  Genome g = pool_genome({"scalar-loads", "shared-tile"});
  g.knobs = {{"shared-tile.threads", 256}, {"shared-tile.outputs", 2}, {"shared-tile.rows", 4}};
  const PoolTile t42 = pool_tile_of(g, pool_window_of("kb1-42-maxpool-2d").value());
  EXPECT_EQ(t42.width, 512);
  EXPECT_EQ(t42.span, 515);   // (512 - 1) x 1 + 1 x (4 - 1) + 1
  EXPECT_EQ(t42.rows_in, 7);  // (4 - 1) x 1 + 1 x (4 - 1) + 1
  EXPECT_EQ(t42.shared_bytes, 4 * 7 * (515 + 512));
  const PoolTile t41 = pool_tile_of(g, pool_window_of("kb1-41-maxpool-1d").value());
  EXPECT_EQ(t41.rows, 1);
  EXPECT_EQ(t41.rows_in, 1);
  EXPECT_EQ(t41.span, 511 + 3 * 7 + 1);  // dilation 3
  const std::string s = generate_pool_candidate(g, "kb1-42-maxpool-2d");
  EXPECT_NE(s.find("constexpr int kRows = 4;"), std::string::npos);
  EXPECT_NE(s.find("constexpr int kSpan = 515;"), std::string::npos);
  EXPECT_EQ(s.find("const float4 v"), std::string::npos);  // scalar loads
  g.strategies = {"vector16-loads", "shared-tile"};
  g.knobs = {{"shared-tile.threads", 512}, {"shared-tile.outputs", 4}, {"shared-tile.rows", 8}};
  const PoolTile big = pool_tile_of(g, pool_window_of("kb1-42-maxpool-2d").value());
  EXPECT_LE(big.shared_bytes, kMaxTileBytes);
  EXPECT_EQ(big.rows, 4);  // 8 rows would need 4 x 11 x (2051 + 2048) bytes
  EXPECT_NE(generate_pool_candidate(g, "kb1-44-avgpool-1d").find("const float4 v"),
            std::string::npos);
  EXPECT_THROW(generate_pool_candidate(g, "kb1-43-maxpool-3d"), UsageError);
  // ... and a 3-D problem's search never draws it.
  EXPECT_EQ(generated_strategies("kb1-43-maxpool-3d").count("shared-tile"), 0u);
  EXPECT_EQ(generated_strategies("kb1-42-maxpool-2d").count("shared-tile"), 1u);
}

TEST(EvolvePoolGenerator, SharedTileCompilesAndLoads) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "kiln_evolve_pool_tile";
  std::filesystem::create_directories(dir);
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"kb1-41-maxpool-1d", {"scalar-loads", "shared-tile"}},
      {"kb1-42-maxpool-2d", {"vector16-loads", "shared-tile"}},
      {"kb1-44-avgpool-1d", {"vector16-loads", "shared-tile"}},
      {"kb1-45-avgpool-2d", {"scalar-loads", "shared-tile"}}};
  int index = 0;
  for (const auto& [problem, strategies] : cases) {
    const Genome g = pool_genome(strategies);
    const std::filesystem::path file = dir / fmt::format("tile_{}.cu", index++);
    std::ofstream(file) << generate_pool_candidate(g, problem);
    bench::CandidateBuild build;
    ASSERT_NO_THROW(build = bench::compile_candidate(file.string(), dir.string(), "sm_90a", 300))
        << problem << ": " << g.describe();
    EXPECT_NE(bench::CandidateLibrary(build.library).entry(), nullptr);
    expect_split_build(file, file.string());
  }
}

// register-sweep: only stride-1 windows of 1 or 2 dimensions draw it, its constants follow the
// knobs (rows only for 2-D; 16-byte loads only for runs of whole float4s), and other windows
// are refused before anything compiles.
TEST(EvolvePoolGenerator, RegisterSweepFollowsTheKnobsAndTheWindow) {
  for (const char* problem : {"kb1-41-maxpool-1d", "kb1-42-maxpool-2d", "kb1-44-avgpool-1d"})
    EXPECT_EQ(generated_strategies(problem).count("register-sweep"), 1u) << problem;
  for (const char* problem : {"kb1-43-maxpool-3d", "kb1-45-avgpool-2d", "kb1-46-avgpool-3d"})
    EXPECT_EQ(generated_strategies(problem).count("register-sweep"), 0u) << problem;
  EXPECT_EQ(generated_strategies("kb1-45-avgpool-2d").count("shared-tile"), 1u);
  EXPECT_EQ(pool_generated_strategies().count("register-sweep"), 1u);

  const Genome vector = genome_of(Family::kPooling, {"vector16-loads", "register-sweep"},
                                  {{"register-sweep.threads", 512},
                                   {"register-sweep.outputs", 8},
                                   {"register-sweep.rows", 64}});
  const std::string v = generate_pool_candidate(vector, "kb1-42-maxpool-2d");
  EXPECT_NE(v.find("constexpr int kThreads = 512;"), std::string::npos);
  EXPECT_NE(v.find("constexpr int kOutputs = 8;"), std::string::npos);
  EXPECT_NE(v.find("constexpr int kRows = 64;"), std::string::npos);
  EXPECT_NE(v.find("constexpr bool kVector = true;"), std::string::npos);
  EXPECT_NE(v.find("kKernel = 4, kStride = 1, kPadding = 1, kDilation = 1"), std::string::npos);
  EXPECT_EQ(v.find("__shared__"), std::string::npos);
  EXPECT_EQ(v.find("__syncthreads"), std::string::npos);
  // Runs of 2 outputs do not start on 16-byte boundaries: 4-byte loads, and the source says so.
  const Genome pairs = genome_of(Family::kPooling, {"vector16-loads", "register-sweep"},
                                 {{"register-sweep.outputs", 2}});
  const std::string p = generate_pool_candidate(pairs, "kb1-44-avgpool-1d");
  EXPECT_NE(p.find("constexpr bool kVector = false;"), std::string::npos);
  EXPECT_NE(p.find("do not start on 16-byte boundaries"), std::string::npos);
  EXPECT_NE(p.find("constexpr bool kMax = false;"), std::string::npos);
  // A 1-D window has one row; the defaults are 256 threads of 4 outputs.
  const Genome scalar = genome_of(Family::kPooling, {"scalar-loads", "register-sweep"},
                                  {{"register-sweep.rows", 16}});
  const std::string s = generate_pool_candidate(scalar, "kb1-41-maxpool-1d");
  EXPECT_NE(s.find("constexpr int kRows = 1;"), std::string::npos);
  EXPECT_NE(s.find("constexpr int kThreads = 256;"), std::string::npos);
  EXPECT_NE(s.find("constexpr int kOutputs = 4;"), std::string::npos);
  EXPECT_NE(s.find("constexpr bool kVector = false;"), std::string::npos);
  EXPECT_NE(s.find("kKernel = 8, kStride = 1, kPadding = 4, kDilation = 3"), std::string::npos);
  EXPECT_NE(generate_pool_candidate(scalar, "kb1-42-maxpool-2d").find("constexpr int kRows = 16;"),
            std::string::npos);
  // Stride 11 and 3-D windows are refused, naming the problem.
  for (const char* problem : {"kb1-45-avgpool-2d", "kb1-43-maxpool-3d", "kb1-46-avgpool-3d"}) {
    EXPECT_THROW(generate_pool_candidate(scalar, problem), UsageError) << problem;
    try {
      (void)generate_pool_sweep_candidate(scalar, problem, pool_window_of(problem).value());
      ADD_FAILURE() << problem << " was not refused";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(problem), std::string::npos) << e.what();
    }
  }
}

TEST(EvolvePoolGenerator, RegisterSweepCompilesAndLoads) {
  const auto genome = [](std::set<std::string> strategies, std::map<std::string, int> knobs) {
    return genome_of(Family::kPooling, std::move(strategies), std::move(knobs));
  };
  expect_compiles_and_loads(
      "kiln_evolve_pool_sweep", "sweep",
      {{"kb1-41-maxpool-1d", genome({"scalar-loads", "register-sweep"}, {})},
       {"kb1-41-maxpool-1d", genome({"vector16-loads", "register-sweep"}, {})},
       {"kb1-42-maxpool-2d", genome({"vector16-loads", "register-sweep"}, {})},
       {"kb1-42-maxpool-2d", genome({"scalar-loads", "register-sweep"},
                                    {{"register-sweep.outputs", 1}, {"register-sweep.rows", 8}})},
       {"kb1-44-avgpool-1d",
        genome({"vector16-loads", "register-sweep"}, {{"register-sweep.outputs", 8}})}},
      generate_pool_candidate);
}

// warp-row-separable: every pooling problem draws it; its constants follow the knobs and the
// window, and a wide window's span shrinks the outputs a lane, then the warps, to fit.
TEST(EvolvePoolGenerator, WarpRowSeparableFollowsTheKnobsAndFitsWideWindows) {
  for (const char* problem : {"kb1-41-maxpool-1d", "kb1-42-maxpool-2d", "kb1-43-maxpool-3d",
                              "kb1-44-avgpool-1d", "kb1-45-avgpool-2d", "kb1-46-avgpool-3d"})
    EXPECT_EQ(generated_strategies(problem).count("warp-row-separable"), 1u) << problem;
  const auto genome = [](int outputs, int warps) {
    return genome_of(
        Family::kPooling, {"scalar-loads", "warp-row-separable"},
        {{"warp-row-separable.outputs", outputs}, {"warp-row-separable.warps", warps}});
  };
  // kb1-46 (kernel 3, stride 2, padding 1): 4 outputs a lane, 128 a warp, from 257 columns.
  const std::string s = generate_pool_candidate(genome(4, 8), "kb1-46-avgpool-3d");
  EXPECT_NE(s.find("constexpr int kWarps = 8;"), std::string::npos);
  EXPECT_NE(s.find("constexpr int kLaneOutputs = 4;"), std::string::npos);
  EXPECT_NE(s.find("kKernel = 3, kStride = 2, kPadding = 1, kDilation = 1"), std::string::npos);
  EXPECT_NE(s.find("constexpr bool kMax = false;"), std::string::npos);
  EXPECT_EQ(s.find("__syncthreads"), std::string::npos);
  // The average's divisor: a multiplication by its exact inverse inside the padded row when that
  // is a power of two, the division (and the clipped divisor at the row's end) otherwise.
  EXPECT_NE(s.find("const long long last_full = (w.in + 2LL * kPadding - kKernel) / kStride;"),
            std::string::npos);
  EXPECT_NE(s.find("v = inside && exact_inverse"), std::string::npos);
  EXPECT_NE(s.find(": v / (inside ? full : outer * static_cast<float>(divisor(w, ow0 + o)));"),
            std::string::npos);
  // The outer taps' loops rolled by default, unrolled by the knob.
  EXPECT_NE(s.find("#pragma unroll 1\n    for (int kd = 0;"), std::string::npos);
  Genome unrolled = genome(4, 8);
  unrolled.knobs["warp-row-separable.unroll_taps"] = 1;
  const std::string u = generate_pool_candidate(unrolled, "kb1-46-avgpool-3d");
  EXPECT_EQ(u.find("#pragma unroll 1\n    for (int kd = 0;"), std::string::npos);
  EXPECT_NE(u.find("#pragma unroll\n    for (int kd = 0;"), std::string::npos);
  const PoolWarpRow c = pool_warp_row_of(genome(4, 8), pool_window_of("kb1-46-avgpool-3d").value());
  EXPECT_EQ(c.span, 127 * 2 + 2 + 1);
  EXPECT_EQ(c.columns, 9);
  EXPECT_EQ(c.shared_bytes, 8 * 9 * 32 * 4);
  // kb1-45 (kernel = stride = 11): 8 outputs a lane would pool 88 columns a lane; 2 fit in
  // registers (22 columns), and 16 such warps in 48 KiB.
  const PoolWindow wide = pool_window_of("kb1-45-avgpool-2d").value();
  const PoolWarpRow w = pool_warp_row_of(genome(8, 16), wide);
  EXPECT_EQ(w.lane_outputs, 2);
  EXPECT_EQ(w.warps, 16);
  EXPECT_EQ(w.columns, 22);
  EXPECT_LE(w.shared_bytes, kMaxWarpRowBytes);
  EXPECT_NE(generate_pool_candidate(genome(8, 16), "kb1-45-avgpool-2d")
                .find("constexpr int kLaneOutputs = 2;"),
            std::string::npos);
  // A 1-D window's span is short: 16 outputs a lane (17 columns) fit as asked.
  const PoolWarpRow one_d =
      pool_warp_row_of(genome(16, 16), pool_window_of("kb1-41-maxpool-1d").value());
  EXPECT_EQ(one_d.lane_outputs, 16);
  EXPECT_EQ(one_d.columns, (511 + 7 * 3 + 1 + 31) / 32);
  EXPECT_EQ(one_d.warps, 16);
  // A window wider still: warps give way once a lane pools a single output.
  PoolWindow wider = wide;
  wider.kernel = wider.stride = 64;
  const PoolWarpRow n = pool_warp_row_of(genome(1, 16), wider);
  EXPECT_EQ(n.lane_outputs, 1);
  EXPECT_LT(n.warps, 16);
  EXPECT_LE(n.shared_bytes, kMaxWarpRowBytes);
  // So wide that one warp's slice exceeds the limit: refused, naming the problem and the limit.
  PoolWindow widest = wide;
  widest.kernel = widest.stride = 400;
  EXPECT_GT(pool_warp_row_of(genome(1, 16), widest).shared_bytes, kMaxWarpRowBytes);
  try {
    (void)generate_pool_warp_row_candidate(genome(1, 16), "kb1-45-avgpool-2d", widest);
    ADD_FAILURE() << "a 400-wide window was not refused";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("kb1-45-avgpool-2d"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("49152"), std::string::npos) << e.what();
  }
}

TEST(EvolvePoolGenerator, WarpRowSeparableCompilesAndLoads) {
  const auto genome = [](int outputs, int warps) {
    return genome_of(
        Family::kPooling, {"vector16-loads", "warp-row-separable"},
        {{"warp-row-separable.outputs", outputs}, {"warp-row-separable.warps", warps}});
  };
  expect_compiles_and_loads("kiln_evolve_pool_warp_row", "warp-row",
                            {{"kb1-41-maxpool-1d", genome(4, 8)},
                             {"kb1-42-maxpool-2d", genome(1, 4)},
                             {"kb1-43-maxpool-3d", genome(2, 8)},
                             {"kb1-45-avgpool-2d", genome(2, 16)},
                             {"kb1-46-avgpool-3d", genome(4, 8)}},
                            generate_pool_candidate);
}

// sliding-planes: 3-D windows only; its constants follow the knobs and the window (scalar-loads'
// unroll is the outputs a thread), a tile too large for the copies or shared memory shrinks, a
// 2-D window is refused, and the combinations with 16-byte loads or a persistent grid are not
// genomes.
TEST(EvolvePoolGenerator, SlidingPlanesFollowsTheKnobsOnThreeDimensionalWindowsOnly) {
  for (const char* problem : {"kb1-43-maxpool-3d", "kb1-46-avgpool-3d"})
    EXPECT_EQ(generated_strategies(problem).count("sliding-planes"), 1u) << problem;
  for (const char* problem :
       {"kb1-41-maxpool-1d", "kb1-42-maxpool-2d", "kb1-44-avgpool-1d", "kb1-45-avgpool-2d"})
    EXPECT_EQ(generated_strategies(problem).count("sliding-planes"), 0u) << problem;
  const auto genome = [](int outputs, int threads, int rows, int planes) {
    return genome_of(Family::kPooling, {"scalar-loads", "sliding-planes"},
                     {{"scalar-loads.unroll", outputs},
                      {"sliding-planes.threads", threads},
                      {"sliding-planes.rows", rows},
                      {"sliding-planes.planes", planes}});
  };
  // kb1-46 (kernel 3, stride 2, padding 1): 8 rows of 32 threads x 4 outputs = 128 columns, from
  // 17 x 257 inputs a depth, 18 copies a thread, two tiles in 34952 bytes.
  const PoolWindow avg = pool_window_of("kb1-46-avgpool-3d").value();
  const PoolPlanes c = pool_planes_of(genome(4, 256, 8, 16), avg);
  EXPECT_EQ(c.cols, 128);
  EXPECT_EQ(c.rows_in, 7 * 2 + 2 + 1);
  EXPECT_EQ(c.cols_in, 127 * 2 + 2 + 1);
  EXPECT_EQ(c.loads, (17 * 257 + 255) / 256);
  EXPECT_EQ(c.shared_bytes, 2 * 4 * 17 * 257);
  const std::string s = generate_pool_candidate(genome(4, 256, 8, 16), "kb1-46-avgpool-3d");
  EXPECT_NE(s.find("constexpr int kRows = 8;"), std::string::npos);
  EXPECT_NE(s.find("constexpr int kOutputs = 4;"), std::string::npos);
  EXPECT_NE(s.find("constexpr int kPlanes = 16;"), std::string::npos);
  EXPECT_NE(s.find("constexpr int kRowsIn = 17, kColsIn = 257;"), std::string::npos);
  EXPECT_NE(s.find("cp.async.ca.shared.global"), std::string::npos);
  EXPECT_NE(s.find("kKernel = 3, kStride = 2, kPadding = 1, kDilation = 1"), std::string::npos);
  // kb1-43 (dilation 3): 16 rows of 32 threads x 8 outputs would be 33+ x 513 inputs a depth;
  // the outputs a thread halve until the copies and the two tiles fit.
  const PoolWindow dilated = pool_window_of("kb1-43-maxpool-3d").value();
  const PoolPlanes big = pool_planes_of(genome(8, 512, 16, 32), dilated);
  EXPECT_LE(big.loads, kMaxPlanesLoads);
  EXPECT_LE(big.shared_bytes, kMaxPlanesBytes);
  EXPECT_LT(big.outputs, 8);
  EXPECT_EQ(big.rows_in, 15 * 2 + 2 * 3 + 1);
  // More rows than warps: a warp spans rows (every rows knob its own kernel).
  const PoolPlanes narrow = pool_planes_of(genome(1, 128, 16, 4), avg);
  EXPECT_EQ(narrow.rows, 16);
  EXPECT_EQ(narrow.cols, 8);
  // A 2-D window: refused by name.
  try {
    (void)generate_pool_planes_candidate(genome(4, 256, 8, 16), "kb1-42-maxpool-2d",
                                         pool_window_of("kb1-42-maxpool-2d").value());
    ADD_FAILURE() << "a 2-D window was not refused";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("3-D windows only"), std::string::npos) << e.what();
  }
  Genome vector = genome(4, 256, 8, 16);
  vector.strategies = {"vector16-loads", "sliding-planes"};
  vector.knobs.erase("scalar-loads.unroll");
  EXPECT_FALSE(violations(vector).empty());
  Genome persistent = genome(4, 256, 8, 16);
  persistent.strategies.insert("persistent-grid");
  EXPECT_FALSE(violations(persistent).empty());
}

TEST(EvolvePoolGenerator, SlidingPlanesCompilesAndLoads) {
  const auto genome = [](int outputs, int threads, int rows, int planes) {
    return genome_of(Family::kPooling, {"scalar-loads", "sliding-planes", "cache-streaming"},
                     {{"scalar-loads.unroll", outputs},
                      {"sliding-planes.threads", threads},
                      {"sliding-planes.rows", rows},
                      {"sliding-planes.planes", planes}});
  };
  expect_compiles_and_loads("kiln_evolve_pool_planes", "planes",
                            {{"kb1-43-maxpool-3d", genome(4, 256, 8, 16)},
                             {"kb1-46-avgpool-3d", genome(2, 128, 4, 32)},
                             {"kb1-46-avgpool-3d", genome(8, 512, 16, 4)}},
                            generate_pool_candidate);
}

}  // namespace
}  // namespace kiln::evolve
