// The evolution engine's path on a GPU, per generated family (issue 20): genomes -> generated
// source -> nvcc (compiled ahead in parallel, as `kiln evolve run` does) -> `kiln bench candidate`
// judging it. Map (kb1-19-relu), middle-dimension reduction (kb1-47, kb1-51), scan (kb1-89..93),
// pooling (kb1-41..46) and whole-array sum (reduce-sum-int32: every step of the reduction ladder)
// must be accepted with a time and U.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../cpu/evolve_generator_test_support.hpp"  // genome_of
#include "child_process.hpp"
#include "core/run_command.hpp"
#include "evolve/candidate_evaluator.hpp"
#include "evolve/sum_ladder.hpp"
#include "gpu_availability.hpp"

namespace kiln::evolve {
namespace {

std::filesystem::path build_dir() {
  return std::filesystem::read_symlink("/proc/self/exe").parent_path();
}

CandidateEvaluatorOptions options(const std::string& problem, const std::string& size) {
  CandidateEvaluatorOptions o;
  o.kiln = (build_dir() / "kiln").string();
  o.problem = problem;
  o.size = size;
  o.folder =
      (std::filesystem::path(::testing::TempDir()) / ("kiln_evolve_gpu_" + problem)).string();
  o.warmup = 2;
  o.iterations = 5;
  o.trials = 2;
  o.timeout_seconds = 30;
  // One build cache for the test run: problems of one CUTLASS configuration share their GEMM.
  o.build_cache =
      (std::filesystem::path(::testing::TempDir()) / "kiln_evolve_gpu_build_cache").string();
  return o;
}

using NamedGenomes = std::vector<std::pair<std::string, Genome>>;

// Judges every genome of every problem and expects each accepted, twice: each built whole by nvcc
// and judged alone (a verdict's path), then as a search screens them (split builds where the
// source is marked for one, bench/split_build.hpp, judged by the judge server). All problems'
// genomes are compiled first, together on every core (CUTLASS candidates take ~20 s each to
// compile), then judged problem by problem.
//
// Run in a child process (tests/gpu/child_process.hpp; not a rank: the judges it starts launch
// their own): the screened pass builds split, and NVRTC's compile initializes the CUDA driver in
// the calling process (nvrtcCompileProgram calls cuInit: H200, 2026-11-29,
// docs/results/2026-11-29f-attention-units/nvrtc_driver_probe.cpp), after which no rank forked
// from it can use the GPU: every rank test after this one in the same test process failed with
// cudaErrorInitializationError.
void judge_all_in_this_process(const std::string& size,
                               const std::vector<std::pair<std::string, NamedGenomes>>& problems);
void expect_all_accepted(const std::string& size,
                         const std::vector<std::pair<std::string, NamedGenomes>>& problems) {
  const int rc = kiln::testing::run_in_child_process([&] {
    judge_all_in_this_process(size, problems);
    return ::testing::Test::HasFailure() ? 1 : 0;  // the child's own failures, printed above
  });
  EXPECT_EQ(rc, 0) << "the judgements above failed (in a child process)";
}

void judge_all_in_this_process(const std::string& size,
                               const std::vector<std::pair<std::string, NamedGenomes>>& problems) {
  for (const bool screened : {false, true}) {
    std::vector<CandidateEvaluatorOptions> per_problem;
    for (const auto& [problem, genomes] : problems) {
      CandidateEvaluatorOptions o = options(problem, size);
      if (screened) {
        o.folder += "_screened";
        o.batch = std::make_shared<BatchVerdicts>();
        o.serve = true;
        o.split_build = true;
        o.timing = "screen";
      }
      per_problem.push_back(o);
    }
    std::vector<std::thread> compiling;
    for (std::size_t p = 0; p < problems.size(); ++p) {
      std::vector<Genome> batch;
      for (const auto& [name, g] : problems[p].second) batch.push_back(g);
      compiling.emplace_back([o = per_problem[p], batch] {
        candidate_preparer(o, static_cast<int>(batch.size()))(batch);
      });
    }
    for (std::thread& t : compiling) t.join();
    for (std::size_t p = 0; p < problems.size(); ++p) {
      const auto& [problem, genomes] = problems[p];
      const CandidateEvaluatorOptions& o = per_problem[p];
      const Evaluator evaluate = candidate_evaluator(o);
      for (const auto& [name, g] : genomes) {
        const Evaluation e = evaluate(g);
        const std::string how = screened ? "screened" : "whole";
        EXPECT_TRUE(e.correct) << problem << " " << name << " " << how << " (" << g.describe()
                               << "): " << e.failure;
        EXPECT_GT(e.us, 0.0) << problem << " " << name << " " << how;
        EXPECT_GT(e.fitness(), 0.0) << problem << " " << name << " " << how;
        // A marked source was judged from its split build (the key the split build writes).
        const std::string stem = fmt::format("{}/{:016x}", o.folder, g.hash());
        std::ifstream source(stem + ".cu"), key(stem + ".so.key");
        const std::string text((std::istreambuf_iterator<char>(source)),
                               std::istreambuf_iterator<char>());
        std::string key_text;
        std::getline(key, key_text);
        const bool marked = text.find("// kiln-device: begin") != std::string::npos;
        if (screened && marked)
          EXPECT_EQ(key_text.rfind("split ", 0), 0u) << problem << " " << name << ": " << key_text;
        std::printf("%-22s %-10s %-8s U %.3f  %9.1f us  %s\n", problem.c_str(), name.c_str(),
                    how.c_str(), e.fitness(), e.us, g.describe().c_str());
      }
    }
  }
}

void expect_accepted(const std::string& problem, const std::string& size,
                     const NamedGenomes& genomes) {
  expect_all_accepted(size, {{problem, genomes}});
}

// Several candidates judged in one launch (`kiln evolve run`'s default): each gets its own verdict
// beside its source, a cheat is rejected, and the batch stops at a crash: the candidates after it
// have no verdict (the engine then judges them alone), none a wrong one.
TEST(EvolveGpu, BatchJudgementGivesEachItsVerdictAndStopsAtACrash) {
  KILN_SKIP_UNLESS_GPUS(1);
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "kiln_evolve_gpu_batch";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::filesystem::path candidates = build_dir().parent_path() / "tests" / "candidates";
  const std::vector<std::pair<std::string, std::string>> order = {
      {"first_correct", "kb1_relu_correct.cu"},
      {"cheat", "kb1_cheat_zero_inputs.cu"},
      {"crash", "crashes.cu"},
      {"after_crash", "kb1_relu_correct.cu"}};
  std::string command = (build_dir() / "kiln").string() +
                        " bench candidate --problem kb1-19-relu --sizes small -g 1 -w 2 -n 5 "
                        "--trials 2 --timeout 30 --json-per-source --build-dir " +
                        dir.string();
  for (const auto& [name, file] : order) {
    std::filesystem::copy_file(candidates / file, dir / (name + ".cu"));
    command += " --source " + (dir / (name + ".cu")).string();
  }
  std::string output;
  const int code = core::run_command(command, output);
  EXPECT_NE(code, 0) << output;  // not every candidate was judged through
  const auto verdict = [&](const std::string& name) -> std::optional<bool> {
    std::ifstream json(dir / (name + ".json"));
    if (!json) return std::nullopt;
    return nlohmann::json::parse(json).at("rows").at(0).at("correct").get<bool>();
  };
  EXPECT_EQ(verdict("first_correct"), std::optional<bool>(true)) << output;
  EXPECT_EQ(verdict("cheat"), std::optional<bool>(false)) << output;
  EXPECT_EQ(verdict("crash"), std::nullopt) << output;
  EXPECT_EQ(verdict("after_crash"), std::nullopt) << output;
}

// The engine's batch path: the preparer judges a generation in one launch and the evaluator
// returns those verdicts, the same ones as judging alone gives.
TEST(EvolveGpu, BatchVerdictsAreTheEvaluatorsAnswers) {
  KILN_SKIP_UNLESS_GPUS(1);
  CandidateEvaluatorOptions o = options("kb1-19-relu", "small");
  o.folder += "_batch";
  std::filesystem::remove_all(o.folder);
  o.batch = std::make_shared<BatchVerdicts>();
  Genome scalar;
  scalar.family = Family::kMap;
  scalar.strategies = {"scalar-loads", "element-per-thread"};
  Genome vector = scalar;
  vector.strategies = {"vector16-loads", "grid-stride"};
  candidate_preparer(o, 4)({scalar, vector});
  EXPECT_EQ(o.batch->judged.size(), 2u);
  const Evaluator evaluate = candidate_evaluator(o);
  for (const Genome& g : {scalar, vector}) {
    const Evaluation e = evaluate(g);
    EXPECT_TRUE(e.correct) << g.describe() << ": " << e.failure;
    EXPECT_GT(e.us, 0.0) << g.describe();
  }
  EXPECT_TRUE(o.batch->judged.empty());  // each verdict taken once
}

TEST(EvolveGpu, MapFamilyGeneratesCompilesAndIsJudged) {
  KILN_SKIP_UNLESS_GPUS(1);
  Genome scalar;
  scalar.family = Family::kMap;
  scalar.strategies = {"scalar-loads", "element-per-thread"};
  Genome vector = scalar;
  vector.strategies = {"vector16-loads", "grid-stride", "persistent-grid"};
  vector.knobs = {{"vector16-loads.unroll", 2}, {"persistent-grid.blocks_per_sm", 2}};
  expect_accepted("kb1-19-relu", "small", {{"scalar", scalar}, {"vector", vector}});
}

// --ncu (issue 20's counter guidance): the evaluator profiles a new best with Nsight Compute
// (`kiln bench candidate --in-process` under ncu) and attaches measured counters; a kernel no
// better than it is not profiled again. Skips where ncu is not on PATH.
TEST(EvolveGpu, NcuCountersAreAttachedToANewBest) {
  KILN_SKIP_UNLESS_GPUS(1);
  std::string ignored;
  if (core::run_command("command -v ncu > /dev/null", ignored) != 0)
    GTEST_SKIP() << "ncu (Nsight Compute) is not on PATH";
  CandidateEvaluatorOptions o = options("kb1-19-relu", "small");
  o.folder += "_ncu";
  o.ncu = true;
  const Evaluator evaluate = candidate_evaluator(o);
  const Genome g = genome_of(Family::kMap, {"vector16-loads", "grid-stride"});
  const Evaluation first = evaluate(g);
  ASSERT_TRUE(first.correct) << first.failure;
  EXPECT_TRUE(first.counters.measured()) << first.counters.error;
  EXPECT_GE(first.counters.launches, 1);
  EXPECT_GT(first.counters.dram_pct, 0.0);
  EXPECT_LE(first.counters.dram_pct, 100.0);
  EXPECT_GT(first.counters.duration_us, 0.0);
  CandidateEvaluatorOptions never = o;
  never.ncu_above = 1e9;  // nothing beats it: no profile
  const Evaluation second = candidate_evaluator(never)(g);
  ASSERT_TRUE(second.correct) << second.failure;
  EXPECT_FALSE(second.counters.measured());
  EXPECT_TRUE(second.counters.error.empty());
}

// The scan family on the five cumulative problems: both work mappings, both team scans, both
// load paths (vector16 with a partial last chunk: small rows are 2048 = 2 chunks of 1024 for a
// 256-thread team of 4, and 2048 is not a multiple of 32 x 12 for the warp of 3 x 4).
TEST(EvolveGpu, ScanFamilyGeneratesCompilesAndIsJudged) {
  KILN_SKIP_UNLESS_GPUS(1);
  Genome block_tree;
  block_tree.family = Family::kScan;
  block_tree.strategies = {"vector16-loads", "row-per-block", "shared-tree"};
  block_tree.knobs = {{"vector16-loads.unroll", 1}, {"row-per-block.threads", 256}};
  Genome block_shuffle = block_tree;
  block_shuffle.strategies = {"vector16-loads", "row-per-block", "warp-shuffle"};
  block_shuffle.knobs = {{"vector16-loads.unroll", 2}, {"row-per-block.threads", 512}};
  Genome warp_shuffle;
  warp_shuffle.family = Family::kScan;
  warp_shuffle.strategies = {"scalar-loads", "row-per-warp", "warp-shuffle"};
  warp_shuffle.knobs = {{"scalar-loads.unroll", 4}, {"row-per-warp.warps_per_block", 4}};
  Genome warp_tree = warp_shuffle;
  warp_tree.strategies = {"vector16-loads", "row-per-warp", "shared-tree"};
  warp_tree.knobs = {{"vector16-loads.unroll", 4}, {"row-per-warp.warps_per_block", 2}};
  // cp-async-pipeline (8 elements a thread): 2 chunks of 1024 under 3 stages (the pipeline longer
  // than the row), 8 chunks of 256 a warp under 2, and one partial chunk (4096 for 2048) under 4.
  Genome block_staged;
  block_staged.family = Family::kScan;
  block_staged.strategies = {"cp-async-pipeline", "row-per-block", "warp-shuffle"};
  block_staged.knobs = {{"cp-async-pipeline.stages", 3}, {"row-per-block.threads", 128}};
  Genome warp_staged = block_staged;
  warp_staged.strategies = {"cp-async-pipeline", "row-per-warp", "shared-tree"};
  warp_staged.knobs = {{"cp-async-pipeline.stages", 2}, {"row-per-warp.warps_per_block", 4}};
  Genome partial_staged = block_staged;
  partial_staged.knobs = {{"cp-async-pipeline.stages", 4}, {"row-per-block.threads", 512}};
  // register-prefetch: two chunks ahead of a block (evict-first), one ahead of a warp.
  Genome block_ahead;
  block_ahead.family = Family::kScan;
  block_ahead.strategies = {"vector16-loads", "register-prefetch", "row-per-block", "warp-shuffle",
                            "cache-streaming"};
  block_ahead.knobs = {{"vector16-loads.unroll", 1},
                       {"register-prefetch.chunks", 2},
                       {"row-per-block.threads", 128}};
  Genome warp_ahead;
  warp_ahead.family = Family::kScan;
  warp_ahead.strategies = {"scalar-loads", "register-prefetch", "row-per-warp", "shared-tree"};
  warp_ahead.knobs = {{"scalar-loads.unroll", 2},
                      {"register-prefetch.chunks", 1},
                      {"row-per-warp.warps_per_block", 4}};
  const std::vector<std::pair<std::string, Genome>> all = {
      {"block-tree", block_tree},      {"block-shfl", block_shuffle},  {"warp-shfl", warp_shuffle},
      {"warp-tree", warp_tree},        {"block-staged", block_staged}, {"warp-staged", warp_staged},
      {"part-staged", partial_staged}, {"block-ahead", block_ahead},   {"warp-ahead", warp_ahead}};
  for (const char* problem : {"kb1-89-cumsum", "kb1-91-cumsum-reverse", "kb1-92-cumsum-exclusive",
                              "kb1-93-masked-cumsum"}) {
    expect_accepted(problem, "small", all);
  }
  expect_accepted("kb1-90-cumprod", "small",
                  {{"block-shfl", block_shuffle},
                   {"block-staged", block_staged},
                   {"block-ahead", block_ahead}});
}

// The pooling family on the six kb1 poolings: a one-shot grid with scalar runs, and a grid-stride
// walk with float4 runs of outputs.
TEST(EvolveGpu, PoolingFamilyGeneratesCompilesAndIsJudged) {
  KILN_SKIP_UNLESS_GPUS(1);
  Genome scalar;
  scalar.family = Family::kPooling;
  scalar.strategies = {"scalar-loads", "element-per-thread"};
  scalar.knobs = {{"scalar-loads.unroll", 2}};
  Genome vector = scalar;
  vector.strategies = {"vector16-loads", "grid-stride"};
  vector.knobs = {{"vector16-loads.unroll", 1}, {"grid-stride.blocks_per_sm", 8}};
  for (const char* problem : {"kb1-41-maxpool-1d", "kb1-42-maxpool-2d", "kb1-43-maxpool-3d",
                              "kb1-44-avgpool-1d", "kb1-45-avgpool-2d", "kb1-46-avgpool-3d"}) {
    expect_accepted(problem, "small", {{"scalar", scalar}, {"vector", vector}});
  }
}

// shared-tile on the 1-D and 2-D windows at the small size: the band staged with 4- and 16-byte
// loads, one and several output rows a block, a tile wider than a row (halo and tail columns).
TEST(EvolveGpu, PoolingSharedTileIsJudged) {
  KILN_SKIP_UNLESS_GPUS(1);
  const Genome scalar = genome_of(Family::kPooling, {"scalar-loads", "shared-tile"},
                                  {{"shared-tile.threads", 128}, {"shared-tile.rows", 1}});
  const Genome vector = genome_of(
      Family::kPooling, {"vector16-loads", "shared-tile"},
      {{"shared-tile.threads", 256}, {"shared-tile.outputs", 4}, {"shared-tile.rows", 8}});
  for (const char* problem :
       {"kb1-41-maxpool-1d", "kb1-42-maxpool-2d", "kb1-44-avgpool-1d", "kb1-45-avgpool-2d"})
    expect_accepted(problem, "small", {{"tile-scalar", scalar}, {"tile-vector", vector}});
}

// register-sweep on the stride-1 windows at the small size: one output a thread (4-byte loads),
// runs of 4 and 8 outputs with 16-byte loads, strips of 8 to 64 rows (2-D), the rows' end threads
// on their checked path.
TEST(EvolveGpu, PoolingRegisterSweepIsJudged) {
  KILN_SKIP_UNLESS_GPUS(1);
  const auto sweep = [](const char* load, int threads, int outputs, int rows) {
    return genome_of(Family::kPooling, {load, "register-sweep"},
                     {{"register-sweep.threads", threads},
                      {"register-sweep.outputs", outputs},
                      {"register-sweep.rows", rows}});
  };
  for (const char* problem : {"kb1-41-maxpool-1d", "kb1-42-maxpool-2d", "kb1-44-avgpool-1d"})
    expect_accepted(problem, "small",
                    {{"sweep-1", sweep("scalar-loads", 128, 1, 8)},
                     {"sweep-4", sweep("vector16-loads", 256, 4, 32)},
                     {"sweep-8", sweep("vector16-loads", 512, 8, 64)},
                     {"sweep-4s", sweep("scalar-loads", 256, 4, 16)}});
}

// sliding-planes on the two 3-D windows at the small size (stride 2; dilation 1 and 3): tiles
// wider and narrower than the output rows, 4 to 32 output depths a block (the knob's range; a
// block's depths clipped at the end), the ring's 2 and 4 slots, evict-first stores.
TEST(EvolveGpu, PoolingSlidingPlanesIsJudged) {
  KILN_SKIP_UNLESS_GPUS(1);
  const auto planes = [](int outputs, int threads, int rows, int depths, bool streaming) {
    std::set<std::string> strategies = {"scalar-loads", "sliding-planes"};
    if (streaming) strategies.insert("cache-streaming");
    return genome_of(Family::kPooling, strategies,
                     {{"scalar-loads.unroll", outputs},
                      {"sliding-planes.threads", threads},
                      {"sliding-planes.rows", rows},
                      {"sliding-planes.planes", depths}});
  };
  for (const char* problem : {"kb1-43-maxpool-3d", "kb1-46-avgpool-3d"})
    expect_accepted(problem, "small",
                    {{"planes-4", planes(4, 256, 8, 16, false)},
                     {"planes-1", planes(1, 128, 2, 4, true)},
                     {"planes-8", planes(8, 512, 16, 32, false)},
                     {"planes-2", planes(2, 128, 4, 4, true)}});
}

// warp-row-separable on all six windows at the small size: 1-3 dimensions, strides 1, 2 and 11,
// padding and dilation; one output a lane to eight (segments wider than the row: the tail lanes),
// small and large blocks, the outer taps rolled and unrolled.
TEST(EvolveGpu, PoolingWarpRowSeparableIsJudged) {
  KILN_SKIP_UNLESS_GPUS(1);
  const auto warp_row = [](int outputs, int warps, int unroll_taps) {
    return genome_of(Family::kPooling, {"scalar-loads", "warp-row-separable"},
                     {{"warp-row-separable.outputs", outputs},
                      {"warp-row-separable.warps", warps},
                      {"warp-row-separable.unroll_taps", unroll_taps}});
  };
  for (const char* problem : {"kb1-41-maxpool-1d", "kb1-42-maxpool-2d", "kb1-43-maxpool-3d",
                              "kb1-44-avgpool-1d", "kb1-45-avgpool-2d", "kb1-46-avgpool-3d"})
    expect_accepted(problem, "small",
                    {{"warp-row-1", warp_row(1, 4, 0)},
                     {"warp-row-2", warp_row(2, 8, 1)},
                     {"warp-row-8", warp_row(8, 16, 0)}});
}

// cache-streaming in the pooling family: each mapping's output stores evict-first, on the six
// pooling problems at the small size.
TEST(EvolveGpu, PoolingCacheStreamingIsJudged) {
  KILN_SKIP_UNLESS_GPUS(1);
  const auto genome = [](std::set<std::string> strategies, std::map<std::string, int> knobs) {
    return genome_of(Family::kPooling, std::move(strategies), std::move(knobs));
  };
  for (const char* problem : {"kb1-41-maxpool-1d", "kb1-42-maxpool-2d", "kb1-43-maxpool-3d",
                              "kb1-44-avgpool-1d", "kb1-45-avgpool-2d", "kb1-46-avgpool-3d"})
    expect_accepted(
        problem, "small",
        {{"ept-cs", genome({"vector16-loads", "element-per-thread", "cache-streaming"}, {})},
         {"warp-row-cs", genome({"scalar-loads", "warp-row-separable", "cache-streaming"},
                                {{"warp-row-separable.outputs", 16}})}});
}

// The normalisation family on its ten problems (kb1-23, 24, 33-40) at the small size: each work
// mapping, one- and two-pass statistics, kept and re-read data, both load paths and block
// combines. L1 and L2 rows are 4095 long (unaligned rows: the vector path's heads and tails).
TEST(EvolveGpu, NormFamilyGeneratesCompilesAndIsJudged) {
  KILN_SKIP_UNLESS_GPUS(1);
  auto genome = [](std::set<std::string> strategies, std::map<std::string, int> knobs) {
    return genome_of(Family::kReduceAxis, std::move(strategies), std::move(knobs));
  };
  const Genome block = genome({"scalar-loads", "row-per-block", "shared-tree"},
                              {{"scalar-loads.unroll", 4}, {"row-per-block.threads", 512}});
  const Genome split = genome({"vector16-loads", "split-row", "warp-shuffle"},
                              {{"vector16-loads.unroll", 2}, {"split-row.splits", 8}});
  const Genome cluster_kept =
      genome({"vector16-loads", "cluster-split-row", "warp-shuffle", "keep-on-chip"},
             {{"cluster-split-row.cluster", 4},
              {"cluster-split-row.threads", 512},
              {"keep-on-chip.max_row_kib", 192}});
  const Genome cluster_online =
      genome({"scalar-loads", "cluster-split-row", "shared-tree", "online-one-pass"},
             {{"cluster-split-row.cluster", 8}});
  // Hopper's non-portable 16-block cluster, a quarter of the row each at KernelBench's softmax
  // size.
  const Genome cluster16_kept =
      genome({"vector16-loads", "cluster-split-row", "warp-shuffle", "keep-on-chip"},
             {{"cluster-split-row.cluster", 16},
              {"cluster-split-row.threads", 512},
              {"keep-on-chip.max_row_kib", 96}});
  const Genome split_online =
      genome({"vector16-loads", "split-row", "shared-tree", "online-one-pass"},
             {{"split-row.splits", 16}, {"split-row.threads", 1024}});
  const Genome split_wide = genome({"vector16-loads", "split-row", "shared-tree"},
                                   {{"split-row.splits", 256}, {"split-row.threads", 1024}});
  for (const char* problem : {"kb1-23-softmax", "kb1-24-log-softmax", "kb1-33-batchnorm",
                              "kb1-34-instancenorm", "kb1-35-groupnorm", "kb1-40-layernorm"}) {
    expect_accepted(problem, "small",
                    {{"block", block},
                     {"split", split},
                     {"cl-kept", cluster_kept},
                     {"cl-online", cluster_online},
                     {"sp-online", split_online},
                     {"cl16-kept", cluster16_kept},
                     // keep-on-chip with online statistics (one pass, then the map; 2026-11-30).
                     {"cl-kept-online", [&] {
                        Genome g = cluster_kept;
                        g.strategies.insert("online-one-pass");
                        return g;
                      }()}});
  }
  // fast-exp (softmax's exponentials on the special-function unit): kept, online and split.
  auto with_fast_exp = [](Genome g) {
    g.strategies.insert("fast-exp");
    return g;
  };
  for (const char* problem : {"kb1-23-softmax", "kb1-24-log-softmax"})
    expect_accepted(problem, "small",
                    {{"cl16-kept-fe", with_fast_exp(cluster16_kept)},
                     {"cl-online-fe", with_fast_exp(cluster_online)},
                     {"sp-online-fe", with_fast_exp(split_online)},
                     {"block-fe", with_fast_exp(block)}});
  for (const char* problem : {"kb1-37-frobenius-norm", "kb1-38-l1-norm", "kb1-39-l2-norm"})
    expect_accepted(problem, "small",
                    {{"block", block},
                     {"split", split},
                     {"split-wide", split_wide},
                     {"cl-kept", cluster_kept}});
  expect_accepted(
      "kb1-36-rmsnorm", "small",
      {{"scalar", genome({"scalar-loads", "row-per-block", "warp-shuffle"}, {})},
       {"vec-kept", genome({"vector16-loads", "row-per-block", "warp-shuffle", "keep-on-chip"},
                           {{"row-per-block.threads", 256}})}});
}

// grid-split-row on the nine contiguous-segment norms at the small size: segments split across
// 4 to 256 blocks of one cooperative launch (groups taking segments in rounds, and more blocks
// than a segment has units of work), kept and re-read units, one and two passes, both combines;
// and cp-async-pipeline: units staged rounds ahead (grid-split-row) or in chunks (a block or a
// cluster per segment). BatchNorm's segments of several runs keep nothing: x is read again.
// The judge's repeated launches check that the arrival counters carry over from launch to launch.
TEST(EvolveGpu, NormGridSplitRowAndStagingAreJudged) {
  KILN_SKIP_UNLESS_GPUS(1);
  auto genome = [](std::set<std::string> strategies, std::map<std::string, int> knobs) {
    return genome_of(Family::kReduceAxis, std::move(strategies), std::move(knobs));
  };
  const std::vector<std::pair<std::string, Genome>> grids = {
      {"g8-kept", genome({"vector16-loads", "grid-split-row", "warp-shuffle", "keep-on-chip"},
                         {{"grid-split-row.splits", 8},
                          {"grid-split-row.threads", 512},
                          {"keep-on-chip.max_row_kib", 192}})},
      {"g132-kept", genome({"vector16-loads", "grid-split-row", "shared-tree", "keep-on-chip"},
                           {{"grid-split-row.splits", 132},
                            {"grid-split-row.threads", 1024},
                            {"keep-on-chip.max_row_kib", 32}})},
      {"g64", genome({"scalar-loads", "grid-split-row", "warp-shuffle"},
                     {{"grid-split-row.splits", 64}, {"scalar-loads.unroll", 4}})},
      {"g256", genome({"vector16-loads", "grid-split-row", "shared-tree"},
                      {{"grid-split-row.splits", 256}, {"grid-split-row.threads", 256}})},
      // Units staged rounds ahead by cp.async: two and four stages, capped by keep-on-chip or
      // by the device's shared memory.
      {"g16-cp2", genome({"cp-async-pipeline", "grid-split-row", "warp-shuffle"},
                         {{"grid-split-row.splits", 16}, {"cp-async-pipeline.stages", 2}})},
      {"g4-cp4-k32", genome({"cp-async-pipeline", "grid-split-row", "shared-tree", "keep-on-chip"},
                            {{"grid-split-row.splits", 4},
                             {"grid-split-row.threads", 1024},
                             {"cp-async-pipeline.stages", 4},
                             {"keep-on-chip.max_row_kib", 32}})},
      {"b-cp3", genome({"cp-async-pipeline", "row-per-block", "warp-shuffle"},
                       {{"cp-async-pipeline.stages", 3}})}};
  std::vector<std::pair<std::string, NamedGenomes>> problems;
  for (const char* problem : {"kb1-37-frobenius-norm", "kb1-38-l1-norm", "kb1-39-l2-norm"})
    problems.push_back({problem, grids});
  std::vector<std::pair<std::string, Genome>> two = grids;
  two.push_back(
      {"g16-online", genome({"vector16-loads", "grid-split-row", "warp-shuffle", "online-one-pass"},
                            {{"grid-split-row.splits", 16}})});
  two.push_back({"g8-cp3-online",
                 genome({"cp-async-pipeline", "grid-split-row", "warp-shuffle", "online-one-pass"},
                        {{"grid-split-row.splits", 8},
                         {"grid-split-row.threads", 1024},
                         {"cp-async-pipeline.stages", 3}})});
  // One unit a block (the fused kernel): the kept range staged in chunks as it is summed.
  two.push_back(
      {"c4-cp4", genome({"cp-async-pipeline", "cluster-split-row", "shared-tree", "keep-on-chip"},
                        {{"cluster-split-row.cluster", 4},
                         {"cp-async-pipeline.stages", 4},
                         {"keep-on-chip.max_row_kib", 96}})});
  two.push_back({"b-cp2-online",
                 genome({"cp-async-pipeline", "row-per-block", "warp-shuffle", "online-one-pass"},
                        {{"row-per-block.threads", 1024}})});
  for (const char* problem : {"kb1-23-softmax", "kb1-24-log-softmax", "kb1-33-batchnorm",
                              "kb1-34-instancenorm", "kb1-35-groupnorm", "kb1-40-layernorm"})
    problems.push_back({problem, two});
  expect_all_accepted("small", problems);  // every source compiled at once, then judged
}

// tma-bulk on the nine contiguous-segment norms at the small size: units copied rounds ahead by
// the TMA engine in a persistent grid of 16-, 8- or 4-block clusters or of single blocks; whole
// units, and units larger than a stage (the rest read from x); one and two passes; BatchNorm's
// segments of several runs take the fused fallback.
TEST(EvolveGpu, NormTmaBulkIsJudged) {
  KILN_SKIP_UNLESS_GPUS(1);
  auto genome = [](std::set<std::string> strategies, std::map<std::string, int> knobs) {
    return genome_of(Family::kReduceAxis, std::move(strategies), std::move(knobs));
  };
  NamedGenomes tma = {
      {"c16-tma2-k96", genome({"tma-bulk", "cluster-split-row", "warp-shuffle", "keep-on-chip"},
                              {{"cluster-split-row.cluster", 16},
                               {"cluster-split-row.threads", 512},
                               {"keep-on-chip.max_row_kib", 96},
                               {"tma-bulk.stages", 2}})},
      {"b-tma3", genome({"tma-bulk", "row-per-block", "shared-tree"},
                        {{"row-per-block.threads", 256}, {"tma-bulk.stages", 3}})},
      {"c4-tma4-k32", genome({"tma-bulk", "cluster-split-row", "shared-tree", "keep-on-chip"},
                             {{"cluster-split-row.cluster", 4},
                              {"cluster-split-row.threads", 1024},
                              {"keep-on-chip.max_row_kib", 32},
                              {"tma-bulk.stages", 4}})}};
  // One stage (the next unit loaded once this one is written) and the bulk store (the map in
  // place, stored by the TMA engine): whole and capped stages, a block and clusters.
  tma.push_back(
      {"c16-tma1-store",
       genome({"tma-bulk", "cluster-split-row", "warp-shuffle"},
              {{"cluster-split-row.cluster", 16}, {"tma-bulk.stages", 1}, {"tma-bulk.store", 1}})});
  tma.push_back(
      {"b-tma2-store-k32", genome({"tma-bulk", "row-per-block", "shared-tree", "keep-on-chip"},
                                  {{"row-per-block.threads", 256},
                                   {"keep-on-chip.max_row_kib", 32},
                                   {"tma-bulk.stages", 2},
                                   {"tma-bulk.store", 1}})});
  tma.push_back({"c4-tma1-store", genome({"tma-bulk", "cluster-split-row", "shared-tree"},
                                         {{"cluster-split-row.cluster", 4},
                                          {"cluster-split-row.threads", 256},
                                          {"tma-bulk.stages", 1},
                                          {"tma-bulk.store", 1}})});
  // Pieces of a stage refilled as soon as they are mapped (chunks): the bulk store and plain
  // stores, one and two stages, a capped stage, a block; at this size some pieces are empty.
  tma.push_back({"c8-tma1-store-chunks8", genome({"tma-bulk", "cluster-split-row", "warp-shuffle"},
                                                 {{"cluster-split-row.cluster", 8},
                                                  {"tma-bulk.stages", 1},
                                                  {"tma-bulk.store", 1},
                                                  {"tma-bulk.chunks", 8}})});
  tma.push_back({"c16-tma2-chunks4", genome({"tma-bulk", "cluster-split-row", "warp-shuffle"},
                                            {{"cluster-split-row.cluster", 16},
                                             {"tma-bulk.stages", 2},
                                             {"tma-bulk.chunks", 4}})});
  tma.push_back({"b-tma1-store-k32-chunks2",
                 genome({"tma-bulk", "row-per-block", "shared-tree", "keep-on-chip"},
                        {{"row-per-block.threads", 256},
                         {"keep-on-chip.max_row_kib", 32},
                         {"tma-bulk.stages", 1},
                         {"tma-bulk.store", 1},
                         {"tma-bulk.chunks", 2}})});
  NamedGenomes two = tma;
  two.push_back({"c8-tma1-store-chunks8-online",
                 genome({"tma-bulk", "cluster-split-row", "warp-shuffle", "online-one-pass"},
                        {{"cluster-split-row.cluster", 8},
                         {"tma-bulk.stages", 1},
                         {"tma-bulk.store", 1},
                         {"tma-bulk.chunks", 8}})});
  two.push_back({"c8-tma3-online",
                 genome({"tma-bulk", "cluster-split-row", "warp-shuffle", "online-one-pass"},
                        {{"cluster-split-row.cluster", 8}, {"tma-bulk.stages", 3}})});
  std::vector<std::pair<std::string, NamedGenomes>> problems;
  for (const char* problem : {"kb1-37-frobenius-norm", "kb1-38-l1-norm", "kb1-39-l2-norm"})
    problems.push_back({problem, tma});
  for (const char* problem : {"kb1-23-softmax", "kb1-24-log-softmax", "kb1-33-batchnorm",
                              "kb1-34-instancenorm", "kb1-35-groupnorm", "kb1-40-layernorm"})
    problems.push_back({problem, two});
  expect_all_accepted("small", problems);  // every source compiled at once, then judged
}

// cache-streaming on the ten norms at the small size: last reads and stores evict-first, through
// each mapping (a block, a cluster with a kept unit, split-row's kernels, grid-split-row's staged
// rounds, a thread per column where the strided norm takes none of it).
TEST(EvolveGpu, NormCacheStreamingIsJudged) {
  KILN_SKIP_UNLESS_GPUS(1);
  auto genome = [](std::set<std::string> strategies, std::map<std::string, int> knobs) {
    return genome_of(Family::kReduceAxis, std::move(strategies), std::move(knobs));
  };
  const NamedGenomes streaming = {
      {"b-cs", genome({"scalar-loads", "row-per-block", "shared-tree", "cache-streaming"},
                      {{"scalar-loads.unroll", 4}})},
      {"c16-k64-cs", genome({"vector16-loads", "cluster-split-row", "warp-shuffle", "keep-on-chip",
                             "cache-streaming"},
                            {{"cluster-split-row.cluster", 16},
                             {"cluster-split-row.threads", 512},
                             {"keep-on-chip.max_row_kib", 64}})},
      {"sp-cs", genome({"vector16-loads", "split-row", "warp-shuffle", "cache-streaming"},
                       {{"split-row.splits", 8}})},
      {"g16-cp2-cs",
       genome({"cp-async-pipeline", "grid-split-row", "warp-shuffle", "cache-streaming"},
              {{"grid-split-row.splits", 16}, {"cp-async-pipeline.stages", 2}})}};
  std::vector<std::pair<std::string, NamedGenomes>> problems;
  for (const char* problem : {"kb1-23-softmax", "kb1-24-log-softmax", "kb1-33-batchnorm",
                              "kb1-34-instancenorm", "kb1-35-groupnorm", "kb1-37-frobenius-norm",
                              "kb1-38-l1-norm", "kb1-39-l2-norm", "kb1-40-layernorm"})
    problems.push_back({problem, streaming});
  expect_all_accepted("small", problems);  // every source compiled at once, then judged
}

// The loss family on its six problems (kb1-94..96, 98..100) at the small size: each work mapping
// (a warp, a block per row; tiles of the flat array where the term allows), one-shot and
// persistent grids, both completions, both load paths and block combines.
TEST(EvolveGpu, LossFamilyGeneratesCompilesAndIsJudged) {
  KILN_SKIP_UNLESS_GPUS(1);
  auto genome = [](std::set<std::string> strategies, std::map<std::string, int> knobs) {
    return genome_of(Family::kReduceAxis, std::move(strategies), std::move(knobs));
  };
  const Genome warp = genome({"vector16-loads", "row-per-warp", "warp-shuffle"},
                             {{"vector16-loads.unroll", 2}, {"row-per-warp.warps_per_block", 8}});
  const Genome block_last =
      genome({"scalar-loads", "row-per-block", "shared-tree", "last-block-combine"},
             {{"scalar-loads.unroll", 4}, {"row-per-block.threads", 512}});
  const Genome warp_persistent = genome(
      {"scalar-loads", "row-per-warp", "shared-tree", "persistent-grid", "last-block-combine"},
      {{"persistent-grid.blocks_per_sm", 2}});
  const Genome tiles = genome(
      {"vector16-loads", "block-tiles", "warp-shuffle", "persistent-grid", "last-block-combine"},
      {{"vector16-loads.unroll", 4}, {"block-tiles.threads", 256}});
  const Genome tiles_two_kernels =
      genome({"scalar-loads", "block-tiles", "shared-tree"}, {{"block-tiles.threads", 1024}});
  const std::vector<std::pair<std::string, Genome>> rows = {
      {"warp", warp}, {"block-last", block_last}, {"warp-pers", warp_persistent}};
  std::vector<std::pair<std::string, Genome>> flat = rows;
  flat.push_back({"tiles", tiles});
  flat.push_back({"tiles-2k", tiles_two_kernels});
  for (const char* problem : {"kb1-94-mse-loss", "kb1-96-huber-loss", "kb1-98-kl-div-loss"})
    expect_accepted(problem, "small", flat);
  for (const char* problem :
       {"kb1-95-cross-entropy-loss", "kb1-99-triplet-margin-loss", "kb1-100-hinge-loss"})
    expect_accepted(problem, "small", rows);
  // The KL divergence's fast-log, on rows and on tiles of the flat array.
  expect_accepted(
      "kb1-98-kl-div-loss", "small",
      {{"block-fast-log", genome({"vector16-loads", "row-per-block", "warp-shuffle", "fast-log"},
                                 {{"vector16-loads.unroll", 2}})},
       {"tiles-fast-log", genome({"scalar-loads", "block-tiles", "shared-tree", "fast-log"}, {})}});
  // Cross entropy's fast-exp on both load paths.
  expect_accepted(
      "kb1-95-cross-entropy-loss", "small",
      {{"warp-fast-exp", genome({"vector16-loads", "row-per-warp", "warp-shuffle", "fast-exp"},
                                {{"vector16-loads.unroll", 4}})},
       {"block-scalar-fast-exp",
        genome({"scalar-loads", "row-per-block", "shared-tree", "fast-exp"},
               {{"scalar-loads.unroll", 4}, {"row-per-block.threads", 256}})}});
}

// The matmul family (CUTLASS 2.x, 3xTF32) on its fifteen products at the small size:
// the default tile everywhere, a small tile with serial split-K where K is long or sizes are
// irregular. The device needs CUTLASS's headers (.deps/cutlass-*/include, carried by
// scripts/pack_carry.sh, or KILN_CUTLASS_INCLUDE_DIR). Each candidate compiles for ~20 s.
TEST(EvolveGpu, MatmulFamilyGeneratesCompilesAndIsJudged) {
  KILN_SKIP_UNLESS_GPUS(1);
  Genome plain;
  plain.family = Family::kMatmul;
  plain.strategies = {"cutlass-sm80-mma", "tf32x3"};
  Genome split = plain;
  split.knobs = {{"cutlass-sm80-mma.tile_m", 64},
                 {"cutlass-sm80-mma.tile_n", 64},
                 {"cutlass-sm80-mma.warp", 32},
                 {"cutlass-sm80-mma.split_k", 4}};
  std::vector<std::pair<std::string, NamedGenomes>> problems;
  for (const char* problem :
       {"kb1-1-square-matmul", "kb1-2-matmul", "kb1-3-batched-matmul", "kb1-7-matmul-small-k",
        "kb1-9-tall-skinny-matmul", "kb1-10-3d-tensor-matmul", "kb1-11-4d-tensor-matmul",
        "kb1-13-symmetric-matmul", "kb1-14-upper-triangular-matmul",
        "kb1-15-lower-triangular-matmul", "kb1-16-matmul-transposed-a",
        "kb1-17-matmul-transposed-b", "kb1-18-matmul-transposed-both"})
    problems.push_back({problem, {{"plain", plain}}});
  for (const char* problem : {"kb1-6-matmul-large-k", "kb1-8-matmul-irregular"})
    problems.push_back({problem, {{"plain", plain}, {"split-k", split}}});
  expect_all_accepted("small", problems);
}

// The sm90 path (matmul_sm90_generator: 3xTF32 as one wgmma GEMM over 3k) on every matmul
// problem at the small size: the cooperative 128 x 128 GEMM for all; on the irregular, batched
// and transposed ones also split-K 4 of the default 128 x 256 (slices summed), ping-pong 64 x 128
// promoting every k-tile, a 2 x 1 cluster of 256 x 128 tiles raster along N, and two operand
// copies read in three k-phases (everywhere). One unit per configuration, shared by the problems.
TEST(EvolveGpu, MatmulSm90GeneratesCompilesAndIsJudged) {
  KILN_SKIP_UNLESS_GPUS(1);
  Genome coop;
  coop.family = Family::kMatmul;
  coop.strategies = {"cutlass-sm90", "tf32x3"};
  // Three operand copies named explicitly (the knob's default is A split in registers).
  coop.knobs = {
      {"cutlass-sm90.tile_n", 128}, {"cutlass-sm90.cluster_m", 1}, {"cutlass-sm90.copies", 3}};
  Genome split = coop;
  split.knobs = {{"cutlass-sm90.split_k", 4},
                 {"cutlass-sm90.copies", 3}};  // the defaults: 128 x 256, 2 x 1 clusters
  Genome pingpong = coop;
  pingpong.knobs = {{"cutlass-sm90.schedule", 1},
                    {"cutlass-sm90.tile_m", 64},
                    {"cutlass-sm90.promote", 4},
                    {"cutlass-sm90.copies", 3}};
  Genome cluster = coop;
  cluster.knobs = {{"cutlass-sm90.tile_m", 256},
                   {"cutlass-sm90.cluster_m", 2},
                   {"cutlass-sm90.raster_n", 1},
                   {"cutlass-sm90.swizzle", 4},
                   {"cutlass-sm90.copies", 3}};
  // Two copies read in three k-phases: cooperative, ping-pong promoted (the FP8 main loop under
  // the phases), and split-K 4 (slices of the virtual K, each its own partial product).
  Genome two_copies = coop;
  two_copies.knobs["cutlass-sm90.copies"] = 2;
  Genome two_copies_pingpong = pingpong;
  two_copies_pingpong.knobs["cutlass-sm90.copies"] = 2;
  Genome two_copies_split = split;
  two_copies_split.knobs["cutlass-sm90.copies"] = 2;
  std::vector<std::pair<std::string, NamedGenomes>> problems;
  for (const char* problem :
       {"kb1-1-square-matmul", "kb1-2-matmul", "kb1-7-matmul-small-k", "kb1-9-tall-skinny-matmul",
        "kb1-10-3d-tensor-matmul", "kb1-11-4d-tensor-matmul", "kb1-13-symmetric-matmul",
        "kb1-14-upper-triangular-matmul", "kb1-15-lower-triangular-matmul",
        "kb1-17-matmul-transposed-b"})
    problems.push_back({problem, {{"coop", coop}, {"two-copies", two_copies}}});
  for (const char* problem : {"kb1-3-batched-matmul", "kb1-8-matmul-irregular",
                              "kb1-16-matmul-transposed-a", "kb1-18-matmul-transposed-both"})
    problems.push_back({problem,
                        {{"coop", coop},
                         {"split-k", split},
                         {"ping-pong", pingpong},
                         {"cluster", cluster},
                         {"two-copies", two_copies},
                         {"two-copies-ping-pong", two_copies_pingpong},
                         {"two-copies-split-k", two_copies_split}}});
  // K = 2^19 of positive terms: plain wgmma accumulation loses 0.1-0.4% to truncation (rejected
  // on the H100, 2026-11-25); promoted accumulation keeps each truncating run short.
  Genome promoted_split = split;
  promoted_split.knobs["cutlass-sm90.promote"] = 16;
  problems.push_back(
      {"kb1-6-matmul-large-k", {{"promoted-split-k", promoted_split}, {"ping-pong", pingpong}}});
  expect_all_accepted("small", problems);
}

// A split in registers (cutlass-sm90 copies 1, matmul_sm90_register_split): A read as stored
// by TMA where it is K-major with rows of whole 16-byte vectors (square, batched, thin and
// tall-skinny K, 3-D and 4-D, transposed B), staged K-major whole where not (the irregular
// product's odd K, a transposed A); cooperative 128 x 128 everywhere, and on the irregular,
// batched and transposed ones also split-K 4 of 128 x 256 in 2 x 1 clusters (B and its small
// part multicast, slices of the real K), ping-pong 64 x 128 and 256 x 128 tiles raster along N.
// kb1-9's K of 32 is one k-tile (the main loop's single-tile path). A transposed is read M-major.
// B in registers (register_operand 1: C^T = B^T A^T written column-major): B read N-major where
// stored k x n (staged where n is not a multiple of 4: the irregular product), K-major where
// stored n x k, with and without split-K.
TEST(EvolveGpu, MatmulSm90RegisterSplitIsJudged) {
  KILN_SKIP_UNLESS_GPUS(1);
  Genome coop;
  coop.family = Family::kMatmul;
  coop.strategies = {"cutlass-sm90", "tf32x3"};
  coop.knobs = {
      {"cutlass-sm90.tile_n", 128}, {"cutlass-sm90.cluster_m", 1}, {"cutlass-sm90.copies", 1}};
  Genome split = coop;
  split.knobs = {{"cutlass-sm90.split_k", 4}, {"cutlass-sm90.copies", 1}};
  Genome pingpong = coop;
  pingpong.knobs = {{"cutlass-sm90.schedule", 1},
                    {"cutlass-sm90.tile_m", 64},
                    {"cutlass-sm90.tile_n", 128},
                    {"cutlass-sm90.copies", 1}};
  Genome wide = coop;
  wide.knobs = {{"cutlass-sm90.tile_m", 256},
                {"cutlass-sm90.tile_n", 128},
                {"cutlass-sm90.cluster_m", 2},
                {"cutlass-sm90.raster_n", 1},
                {"cutlass-sm90.copies", 1}};
  Genome b_coop = coop;
  b_coop.knobs["cutlass-sm90.register_operand"] = 1;
  Genome b_split = split;
  b_split.knobs["cutlass-sm90.register_operand"] = 1;
  std::vector<std::pair<std::string, NamedGenomes>> problems;
  for (const char* problem :
       {"kb1-1-square-matmul", "kb1-2-matmul", "kb1-7-matmul-small-k", "kb1-9-tall-skinny-matmul",
        "kb1-10-3d-tensor-matmul", "kb1-11-4d-tensor-matmul", "kb1-13-symmetric-matmul",
        "kb1-17-matmul-transposed-b"})
    problems.push_back({problem, {{"register-split", coop}, {"register-b", b_coop}}});
  for (const char* problem : {"kb1-3-batched-matmul", "kb1-8-matmul-irregular",
                              "kb1-16-matmul-transposed-a", "kb1-18-matmul-transposed-both"})
    problems.push_back({problem,
                        {{"register-split", coop},
                         {"register-split-split-k", split},
                         {"register-split-ping-pong", pingpong},
                         {"register-split-wide", wide},
                         {"register-b", b_coop},
                         {"register-b-split-k", b_split}}});
  expect_all_accepted("small", problems);
}

// shared_split (no operand split in memory: the register operand split in registers, the other
// read as stored, or as one raw K-major copy, and split in shared memory by the consumers as its
// stage arrives) on every general product at the small size: each operand in registers,
// cooperative and ping-pong (its own barrier a warp group), split-K (the operand read as stored
// slice by slice), and 2 x 1 clusters (B's tile multicast, split in each block's copy).
TEST(EvolveGpu, MatmulSm90SharedSplitIsJudged) {
  KILN_SKIP_UNLESS_GPUS(1);
  Genome a_coop;
  a_coop.family = Family::kMatmul;
  a_coop.strategies = {"cutlass-sm90", "tf32x3"};
  a_coop.knobs = {{"cutlass-sm90.tile_n", 128},
                  {"cutlass-sm90.cluster_m", 1},
                  {"cutlass-sm90.copies", 1},
                  {"cutlass-sm90.shared_split", 1}};
  Genome b_coop = a_coop;
  b_coop.knobs["cutlass-sm90.register_operand"] = 1;
  Genome a_split = a_coop;
  a_split.knobs["cutlass-sm90.split_k"] = 4;
  a_split.knobs["cutlass-sm90.cluster_m"] = 2;
  Genome b_split = a_split;
  b_split.knobs["cutlass-sm90.register_operand"] = 1;
  Genome pingpong = a_coop;
  pingpong.knobs["cutlass-sm90.schedule"] = 1;
  pingpong.knobs["cutlass-sm90.tile_m"] = 64;
  // 2: the producer warp group's auxiliary warp splits B (cooperative with each operand in
  // registers, ping-pong, split-K).
  Genome a_warp = a_coop;
  a_warp.knobs["cutlass-sm90.shared_split"] = 2;
  Genome b_warp = b_coop;
  b_warp.knobs["cutlass-sm90.shared_split"] = 2;
  Genome warp_pingpong = pingpong;
  warp_pingpong.knobs["cutlass-sm90.shared_split"] = 2;
  Genome warp_split = b_split;
  warp_split.knobs["cutlass-sm90.shared_split"] = 2;
  std::vector<std::pair<std::string, NamedGenomes>> problems;
  for (const char* problem :
       {"kb1-1-square-matmul", "kb1-2-matmul", "kb1-3-batched-matmul", "kb1-6-matmul-large-k",
        "kb1-7-matmul-small-k", "kb1-8-matmul-irregular", "kb1-9-tall-skinny-matmul",
        "kb1-10-3d-tensor-matmul", "kb1-11-4d-tensor-matmul", "kb1-13-symmetric-matmul",
        "kb1-16-matmul-transposed-a", "kb1-17-matmul-transposed-b",
        "kb1-18-matmul-transposed-both"})
    problems.push_back({problem,
                        {{"shared-split-a", a_coop},
                         {"shared-split-b", b_coop},
                         {"shared-split-a-split-k", a_split},
                         {"shared-split-b-split-k", b_split},
                         {"shared-split-ping-pong", pingpong},
                         {"transform-warp-a", a_warp},
                         {"transform-warp-b", b_warp},
                         {"transform-warp-ping-pong", warp_pingpong},
                         {"transform-warp-split-k", warp_split}}});
  expect_all_accepted("small", problems);
}

// warp-mma-tiles (matmul_mma_generator: kiln's own 3xTF32 mma.sync GEMM, the split fused) on
// the general products at the small size: the default 2 x 2 warps of 64 x 64 everywhere; on the
// thin-K, irregular, batched and transposed ones also 32 x 32 warp tiles two blocks an SM, K
// chunks of 16 with streaming stores, and 4 x 2 warps (a 256-row block, edges in M).
TEST(EvolveGpu, MatmulWarpMmaTilesIsJudged) {
  KILN_SKIP_UNLESS_GPUS(1);
  Genome tiles;
  tiles.family = Family::kMatmul;
  tiles.strategies = {"warp-mma-tiles", "tf32x3"};
  Genome small = tiles;
  small.knobs = {{"warp-mma-tiles.warp_m", 32},
                 {"warp-mma-tiles.warp_n", 32},
                 {"warp-mma-tiles.warps_n", 4},
                 {"warp-mma-tiles.blocks_per_sm", 2}};
  Genome chunk16 = tiles;
  chunk16.knobs = {{"warp-mma-tiles.chunk_k", 16}, {"warp-mma-tiles.stream_stores", 1}};
  Genome tall = tiles;
  tall.knobs = {{"warp-mma-tiles.warps_m", 4}, {"warp-mma-tiles.warp_n", 32}};
  std::vector<std::pair<std::string, NamedGenomes>> problems;
  for (const char* problem : {"kb1-1-square-matmul", "kb1-2-matmul", "kb1-10-3d-tensor-matmul",
                              "kb1-11-4d-tensor-matmul", "kb1-13-symmetric-matmul"})
    problems.push_back({problem, {{"tiles", tiles}}});
  for (const char* problem :
       {"kb1-3-batched-matmul", "kb1-7-matmul-small-k", "kb1-8-matmul-irregular",
        "kb1-9-tall-skinny-matmul", "kb1-16-matmul-transposed-a", "kb1-17-matmul-transposed-b",
        "kb1-18-matmul-transposed-both"})
    problems.push_back(
        {problem, {{"tiles", tiles}, {"small", small}, {"chunk16", chunk16}, {"tall", tall}}});
  expect_all_accepted("small", problems);
}

// exploit-structure on the triangular products: a grouped GEMM of the triangle's blocks, or
// (ranged) one GEMM whose scheduler gives each tile its K range. At the
// small size (n = 256): blocks of 128 (a 2 x 2 block grid) and of 512 (padded: the GEMM writes
// a padded target copied into C); at KernelBench's (n = 4096) the defaults, whose long K ranges
// are cut into slices summed afterwards (two GEMM units in all: compiling one takes a minute).
TEST(EvolveGpu, MatmulTriangleIsJudged) {
  KILN_SKIP_UNLESS_GPUS(1);
  Genome blocks;
  blocks.family = Family::kMatmul;
  blocks.strategies = {"cutlass-sm90", "tf32x3", "exploit-structure"};
  blocks.knobs = {{"exploit-structure.block", 128}};
  // Two column blocks a group: the 2 x 2 block grid's first row in one group, K over both.
  Genome grouped = blocks;
  grouped.knobs = {{"exploit-structure.block", 128}, {"exploit-structure.group_blocks", 2}};
  Genome padded = blocks;
  padded.knobs = {{"exploit-structure.block", 512}};
  Genome defaults = blocks;
  defaults.knobs = {};
  // The ranged form (one GEMM, the triangle's tile scheduler; cooperative, 128 x 128 tiles: 2 x
  // 2 at the small size): B split in registers with A's two copies split in its band, and A
  // split in registers with B split in shared memory by the consumers (the ping-pong schedule
  // asked, the cooperative kernel generated).
  Genome ranged = blocks;
  ranged.knobs = {{"exploit-structure.ranged", 1}, {"cutlass-sm90.register_operand", 1}};
  Genome ranged_shared = blocks;
  ranged_shared.knobs = {{"exploit-structure.ranged", 1},
                         {"cutlass-sm90.schedule", 1},
                         {"cutlass-sm90.shared_split", 1}};
  for (const char* problem : {"kb1-14-upper-triangular-matmul", "kb1-15-lower-triangular-matmul"}) {
    expect_accepted(problem, "small",
                    {{"blocks-128", blocks},
                     {"grouped-2", grouped},
                     {"padded-512", padded},
                     {"ranged", ranged},
                     {"ranged-shared-split", ranged_shared}});
    Genome grouped_kb = blocks;
    grouped_kb.knobs = {{"exploit-structure.group_blocks", 2}};
    expect_accepted(problem, "kb",
                    {{"defaults", defaults}, {"grouped-2", grouped_kb}, {"ranged", ranged}});
  }
}

// The matrix-vector product (kb1-4) and the row scaling (kb1-12) at the small size: a warp and a
// block per row, a one-shot grid and a grid-stride walk, both load paths.
TEST(EvolveGpu, Blas2FamilyGeneratesCompilesAndIsJudged) {
  KILN_SKIP_UNLESS_GPUS(1);
  expect_accepted(
      "kb1-4-matvec", "small",
      {{"warp", genome_of(Family::kReduceAxis, {"vector16-loads", "row-per-warp", "warp-shuffle"},
                          {{"vector16-loads.unroll", 4}})},
       {"block-tree",
        genome_of(Family::kReduceAxis, {"scalar-loads", "row-per-block", "shared-tree"},
                  {{"row-per-block.threads", 512}})},
       {"block-shfl",
        genome_of(Family::kReduceAxis, {"vector16-loads", "row-per-block", "warp-shuffle"}, {})}});
  expect_accepted(
      "kb1-12-diag-matmul", "small",
      {{"one-shot", genome_of(Family::kMap, {"vector16-loads", "element-per-thread"}, {})},
       {"stride",
        genome_of(Family::kMap, {"scalar-loads", "grid-stride"}, {{"scalar-loads.unroll", 4}})}});
}

// Attention (kb1-97) at the small size (32 x 32 heads, seq 128, d 64): two CUTLASS 3xTF32 GEMMs
// around the row softmax, two tile configurations.
TEST(EvolveGpu, AttentionGeneratesCompilesAndIsJudged) {
  KILN_SKIP_UNLESS_GPUS(1);
  Genome plain;
  plain.family = Family::kAttention;
  plain.strategies = {"cutlass-sm80-mma", "tf32x3", "two-pass"};
  Genome small = plain;
  small.knobs = {{"cutlass-sm80-mma.tile_m", 64},
                 {"cutlass-sm80-mma.tile_n", 64},
                 {"cutlass-sm80-mma.warp", 32}};
  expect_accepted("kb1-97-sdpa", "small", {{"128x128", plain}, {"64x64", small}});
}

TEST(EvolveGpu, MiddleReductionFamilyGeneratesCompilesAndIsJudged) {
  KILN_SKIP_UNLESS_GPUS(1);
  Genome warp;
  warp.family = Family::kReduceAxis;
  warp.strategies = {"scalar-loads", "row-per-warp", "shared-tree"};
  Genome split = warp;
  split.strategies = {"scalar-loads", "split-row", "shared-tree"};
  split.knobs = {{"scalar-loads.unroll", 4}, {"split-row.splits", 8}};
  // Column strips: 8 columns a thread (a strip wider than the small size's last block of
  // columns, so the bound on live columns is exercised), and 2 with a split of D1.
  Genome strips = warp;
  strips.strategies = {"scalar-loads", "row-per-block", "shared-tree", "column-strips"};
  strips.knobs = {{"scalar-loads.unroll", 8}, {"column-strips.columns", 8}};
  Genome split_strips = split;
  split_strips.strategies.insert("column-strips");
  split_strips.knobs["column-strips.columns"] = 2;
  expect_accepted("kb1-47-sum-reduction", "small",
                  {{"row-per-warp", warp}, {"split", split}, {"strips", strips}});
  expect_accepted("kb1-51-argmax", "small",
                  {{"split", split}, {"strips", strips}, {"split-strips", split_strips}});
  expect_accepted("kb1-53-min-reduction", "small", {{"split-strips", split_strips}});
}

TEST(EvolveGpu, WholeSumLadderGeneratesCompilesAndIsJudged) {
  KILN_SKIP_UNLESS_GPUS(1);
  // Every step at 1e6 elements (multi-pass, atomic and last-block completion; trees in global
  // and shared memory; warp tails; 16-byte loads), then two at 1e8 where grids are large.
  const auto ladder = sum_ladder_genomes();
  expect_accepted("reduce-sum-int32", "1e6", ladder);
  expect_accepted("reduce-sum-int32", "1e8", {ladder.front(), ladder.back()});
}

}  // namespace
}  // namespace kiln::evolve
