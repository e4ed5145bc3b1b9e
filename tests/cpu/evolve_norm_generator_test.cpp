// The normalisation family's generator (issue 20) on the CPU: which problems it covers and with
// which allowed set, that random genomes of each allowed set generate, that the source follows the
// genome (mapping, passes, keep-on-chip, load path, block combine) and the problem (statistic,
// view), and that one genome per mapping and problem kind compiles with nvcc and loads. The GPU
// test (EvolveGpu.NormFamilyGeneratesCompilesAndIsJudged) judges them.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench/candidate_library.hpp"
#include "core/error.hpp"
#include "evolve/candidate_evaluator.hpp"
#include "evolve/genome.hpp"
#include "evolve/norm_generator.hpp"
#include "evolve_generator_test_support.hpp"

namespace kiln::evolve {
namespace {

Genome norm_genome(std::set<std::string> strategies, std::map<std::string, int> knobs = {}) {
  return genome_of(Family::kReduceAxis, std::move(strategies), std::move(knobs));
}

const std::vector<std::string>& norm_problems() {
  static const std::vector<std::string> problems = {
      "kb1-23-softmax",   "kb1-24-log-softmax", "kb1-33-batchnorm",      "kb1-34-instancenorm",
      "kb1-35-groupnorm", "kb1-36-rmsnorm",     "kb1-37-frobenius-norm", "kb1-38-l1-norm",
      "kb1-39-l2-norm",   "kb1-40-layernorm"};
  return problems;
}

TEST(EvolveNormGenerator, TheNormalisationProblemsOnly) {
  EXPECT_FALSE(norm_kind_of("kb1-47-sum-reduction").has_value());
  EXPECT_FALSE(norm_kind_of("kb1-95-cross-entropy-loss").has_value());
  for (const std::string& p : norm_problems()) {
    EXPECT_TRUE(norm_kind_of(p).has_value()) << p;
    EXPECT_EQ(generated_family(p), Family::kReduceAxis) << p;
    EXPECT_EQ(&generated_strategies(p), &norm_generated_strategies(p)) << p;
  }
  EXPECT_TRUE(norm_kind_of("kb1-36-rmsnorm")->strided);
  EXPECT_TRUE(norm_kind_of("kb1-23-softmax")->two_statistics);
  EXPECT_FALSE(norm_kind_of("kb1-39-l2-norm")->two_statistics);
  // Passes only where there are two statistics; strided segments have one mapping.
  EXPECT_TRUE(norm_generated_strategies("kb1-40-layernorm").count("online-one-pass"));
  EXPECT_FALSE(norm_generated_strategies("kb1-38-l1-norm").count("online-one-pass"));
  EXPECT_FALSE(norm_generated_strategies("kb1-36-rmsnorm").count("split-row"));
  EXPECT_THROW(norm_generated_strategies("kb1-19-relu"), UsageError);
  EXPECT_THROW(
      generate_norm_candidate(norm_genome({"scalar-loads", "row-per-block", "shared-tree"}),
                              "kb1-47-sum-reduction"),
      UsageError);
}

TEST(EvolveNormGenerator, RandomGenomesOfEachAllowedSetGenerate) {
  Rng rng(23);
  for (const std::string& p : norm_problems()) {
    const StrategySet& allowed = norm_generated_strategies(p);
    for (int i = 0; i < 60; ++i) {
      const Genome g = random_genome(Family::kReduceAxis, rng, 0.5, &allowed);
      ASSERT_TRUE(violations(g).empty()) << g.describe();
      for (const std::string& s : g.strategies) EXPECT_TRUE(allowed.count(s)) << p << ": " << s;
      EXPECT_NO_THROW((void)generate_norm_candidate(g, p)) << p << ": " << g.describe();
    }
  }
  // A strategy outside the problem's set is the genome's failure, not silently ignored.
  EXPECT_THROW(generate_norm_candidate(norm_genome({"scalar-loads", "split-row", "warp-shuffle"}),
                                       "kb1-36-rmsnorm"),
               UsageError);
  EXPECT_THROW(generate_norm_candidate(
                   norm_genome({"scalar-loads", "row-per-block", "shared-tree", "online-one-pass"}),
                   "kb1-39-l2-norm"),
               UsageError);
}

TEST(EvolveNormGenerator, SourceFollowsTheGenomeAndTheProblem) {
  const Genome cluster =
      norm_genome({"vector16-loads", "cluster-split-row", "warp-shuffle", "keep-on-chip"},
                  {{"vector16-loads.unroll", 2},
                   {"cluster-split-row.cluster", 8},
                   {"cluster-split-row.threads", 512},
                   {"keep-on-chip.max_row_kib", 192}});
  const std::string c = generate_norm_candidate(cluster, "kb1-23-softmax");
  EXPECT_NE(c.find("constexpr int kThreads = 512;"), std::string::npos);
  EXPECT_NE(c.find("constexpr int kParts = 8;"), std::string::npos);
  EXPECT_NE(c.find("constexpr bool kCluster = true;"), std::string::npos);
  EXPECT_NE(c.find("constexpr bool kSplit = false;"), std::string::npos);
  EXPECT_NE(c.find("constexpr long long kKeepFloats = 49152;"), std::string::npos);
  EXPECT_NE(c.find("constexpr int kPasses = 2;"), std::string::npos);  // kept: two passes on chip
  EXPECT_NE(c.find("map_shared_rank"), std::string::npos);
  EXPECT_NE(c.find("__shfl_down_sync"), std::string::npos);
  EXPECT_NE(c.find("reinterpret_cast<const float4*>"), std::string::npos);
  EXPECT_NE(c.find("kexp(x - f.f0) * f.f1"), std::string::npos);
  EXPECT_NE(c.find("constexpr bool kFastExp = false;"), std::string::npos);  // expf unless asked
  // fast-exp: the same kernel with exp on the special-function unit; softmax only.
  Genome fast = cluster;
  fast.strategies.insert("fast-exp");
  const std::string f = generate_norm_candidate(fast, "kb1-23-softmax");
  EXPECT_NE(f.find("constexpr bool kFastExp = true;"), std::string::npos);
  EXPECT_NE(f.find("ex2.approx.ftz.f32"), std::string::npos);
  EXPECT_THROW(generate_norm_candidate(fast, "kb1-34-instancenorm"), UsageError);

  const Genome split = norm_genome({"scalar-loads", "split-row", "shared-tree", "online-one-pass"},
                                   {{"scalar-loads.unroll", 4}, {"split-row.splits", 16}});
  const std::string s = generate_norm_candidate(split, "kb1-40-layernorm");
  EXPECT_NE(s.find("constexpr bool kSplit = true;"), std::string::npos);
  EXPECT_NE(s.find("constexpr int kParts = 16;"), std::string::npos);
  EXPECT_NE(s.find("constexpr int kPasses = 1;"), std::string::npos);
  EXPECT_NE(s.find("constexpr long long kKeepFloats = 0;"), std::string::npos);
  EXPECT_NE(s.find("__fdividef(d, s.n)"), std::string::npos);  // Welford's one-pass variance
  EXPECT_NE(s.find("stats_kernel"), std::string::npos);
  EXPECT_EQ(s.find("map_shared_rank"), std::string::npos);
  EXPECT_EQ(s.find("__shfl_down_sync"), std::string::npos);
  EXPECT_EQ(s.find("reinterpret_cast<const float4*>"), std::string::npos);
  EXPECT_NE(s.find("View{batch, features * dim1 * dim2"), std::string::npos);

  const std::string b = generate_norm_candidate(
      norm_genome({"scalar-loads", "row-per-block", "shared-tree"}), "kb1-33-batchnorm");
  EXPECT_NE(b.find("constexpr int kPasses = 2;"), std::string::npos);  // absent: two passes
  EXPECT_NE(b.find("View{features, batch * dim1 * dim2, dim1 * dim2, batch"), std::string::npos);

  const std::string r = generate_norm_candidate(
      norm_genome({"vector16-loads", "row-per-block", "warp-shuffle", "keep-on-chip"}),
      "kb1-36-rmsnorm");
  EXPECT_NE(r.find("strided_kernel<4>"), std::string::npos);
  EXPECT_NE(r.find("constexpr int kKeepRegisters = 64;"), std::string::npos);
  EXPECT_NE(r.find("kEps"), std::string::npos);
}

// The one-pass statistics take a 16-byte vector's four values at once: softmax's running maximum
// once for the four (nothing added while it is -inf), Welford's four merged by Chan's combine
// with a merge term exactly 0 on a thread's first four; two-pass statistics add the four one by
// one.
TEST(EvolveNormGenerator, OnePassStatisticsTakeFourValuesAtOnce) {
  const std::string softmax = generate_norm_candidate(
      norm_genome({"vector16-loads", "row-per-block", "warp-shuffle", "online-one-pass"}),
      "kb1-23-softmax");
  EXPECT_NE(softmax.find("const float m4 = fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w));"),
            std::string::npos);
  EXPECT_NE(softmax.find("} else if (s.a != -INFINITY) {"), std::string::npos);
  EXPECT_NE(softmax.find("f(v[u]);"), std::string::npos);
  const std::string welford = generate_norm_candidate(
      norm_genome({"vector16-loads", "row-per-block", "warp-shuffle", "online-one-pass"}),
      "kb1-34-instancenorm");
  EXPECT_NE(welford.find("(d * w) * (d * s.n)"), std::string::npos);
  EXPECT_NE(welford.find("(v.x * 0.25f + v.y * 0.25f) + (v.z * 0.25f + v.w * 0.25f)"),
            std::string::npos);
  const std::string two_pass = generate_norm_candidate(
      norm_genome({"vector16-loads", "row-per-block", "warp-shuffle"}), "kb1-34-instancenorm");
  EXPECT_NE(two_pass.find("add(s, v.x, pass, c);"), std::string::npos);
  EXPECT_EQ(two_pass.find("m4"), std::string::npos);
}

TEST(EvolveNormGenerator, GridSplitRowIsOnePersistentCooperativeLaunch) {
  EXPECT_TRUE(norm_generated_strategies("kb1-40-layernorm").count("grid-split-row"));
  EXPECT_TRUE(norm_generated_strategies("kb1-37-frobenius-norm").count("grid-split-row"));
  EXPECT_FALSE(norm_generated_strategies("kb1-36-rmsnorm").count("grid-split-row"));
  const std::string s = generate_norm_candidate(
      norm_genome({"vector16-loads", "grid-split-row", "warp-shuffle", "keep-on-chip"},
                  {{"grid-split-row.splits", 128},
                   {"grid-split-row.threads", 1024},
                   {"keep-on-chip.max_row_kib", 96}}),
      "kb1-40-layernorm");
  EXPECT_NE(s.find("constexpr int kParts = 128;"), std::string::npos);
  EXPECT_NE(s.find("constexpr int kThreads = 1024;"), std::string::npos);
  EXPECT_NE(s.find("constexpr long long kKeepFloats = 24576;"), std::string::npos);
  EXPECT_NE(s.find("grid_norm_kernel"), std::string::npos);
  EXPECT_NE(s.find("cudaLaunchAttributeCooperative"), std::string::npos);
  EXPECT_NE(s.find("cudaOccupancyMaxActiveBlocksPerMultiprocessor"), std::string::npos);
  EXPECT_EQ(s.find("stats_kernel"), std::string::npos);  // one launch, no split kernels
  EXPECT_EQ(s.find("cudaLaunchAttributeClusterDimension"), std::string::npos);
  // Two statistics without online-one-pass: two group waits per segment.
  EXPECT_NE(s.find("constexpr int kPasses = 2;"), std::string::npos);
  EXPECT_NE(s.find("constexpr int kStages = 1;"), std::string::npos);

  // cp-async-pipeline: stages ahead, implied keeping (no keep-on-chip cap), one pass online.
  const std::string p = generate_norm_candidate(
      norm_genome({"cp-async-pipeline", "grid-split-row", "warp-shuffle", "online-one-pass"},
                  {{"cp-async-pipeline.stages", 3}}),
      "kb1-35-groupnorm");
  EXPECT_NE(p.find("constexpr int kStages = 3;"), std::string::npos);
  EXPECT_NE(p.find("constexpr long long kKeepFloats = 1099511627776;"), std::string::npos);
  EXPECT_NE(p.find("constexpr int kPasses = 1;"), std::string::npos);
  EXPECT_NE(p.find("cp.async.cg.shared.global"), std::string::npos);
  EXPECT_NE(p.find("(3 stages: rounds"), std::string::npos);
  // One unit a block: its chunks staged; split-row keeps nothing to stage (the catalog says so).
  const std::string c = generate_norm_candidate(
      norm_genome({"cp-async-pipeline", "cluster-split-row", "warp-shuffle", "online-one-pass"}),
      "kb1-35-groupnorm");
  EXPECT_NE(c.find("wait_copies_but(kStages - 1 - i)"), std::string::npos);
  EXPECT_NE(c.find("constexpr int kStages = 2;"), std::string::npos);
  EXPECT_FALSE(violations(norm_genome({"cp-async-pipeline", "split-row", "warp-shuffle"})).empty());
}

// tma-bulk: a persistent grid of clusters (or blocks) whose units the TMA engine copies rounds
// ahead; the fused kernel stays in the source as the fallback for segments of several runs and
// unaligned tensors; split-row and grid-split-row cannot take it (the catalog and the generator).
TEST(EvolveNormGenerator, TmaBulkStagesUnitsRoundsAheadInAPersistentGrid) {
  EXPECT_TRUE(norm_generated_strategies("kb1-23-softmax").count("tma-bulk"));
  EXPECT_TRUE(norm_generated_strategies("kb1-38-l1-norm").count("tma-bulk"));
  EXPECT_FALSE(norm_generated_strategies("kb1-36-rmsnorm").count("tma-bulk"));
  const std::string s = generate_norm_candidate(
      norm_genome({"tma-bulk", "cluster-split-row", "warp-shuffle", "keep-on-chip"},
                  {{"cluster-split-row.cluster", 16},
                   {"keep-on-chip.max_row_kib", 96},
                   {"tma-bulk.stages", 3}}),
      "kb1-23-softmax");
  EXPECT_NE(s.find("constexpr int kTmaStages = 3;"), std::string::npos);
  EXPECT_NE(s.find("constexpr int kTmaChunks = 1;"), std::string::npos);  // the whole stage
  EXPECT_NE(s.find("constexpr int kStages = 1;"), std::string::npos);     // no cp.async chunks
  EXPECT_NE(s.find("constexpr long long kKeepFloats = 24576;"), std::string::npos);
  EXPECT_NE(s.find("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"),
            std::string::npos);
  EXPECT_NE(s.find("mbarrier.try_wait.parity"), std::string::npos);
  EXPECT_NE(s.find("cudaOccupancyMaxActiveClusters"), std::string::npos);
  EXPECT_NE(s.find("return run_fused(x, y, v, aligned, stream);"), std::string::npos);
  EXPECT_NE(s.find("static int run_fused("), std::string::npos);
  EXPECT_NE(s.find("TMA engine 3 rounds ahead"), std::string::npos);
  // Implied keeping without keep-on-chip's cap; a block per segment without clusters.
  const std::string b = generate_norm_candidate(
      norm_genome({"tma-bulk", "row-per-block", "shared-tree", "online-one-pass"}),
      "kb1-34-instancenorm");
  EXPECT_NE(b.find("constexpr long long kKeepFloats = 1099511627776;"), std::string::npos);
  EXPECT_NE(b.find("constexpr bool kCluster = false;"), std::string::npos);
  EXPECT_NE(b.find("constexpr int kTmaStages = 2;"), std::string::npos);
  // Pieces of a stage, each with its own mbarrier, refilled once mapped.
  const std::string chunked = generate_norm_candidate(
      norm_genome({"tma-bulk", "cluster-split-row", "warp-shuffle"},
                  {{"tma-bulk.stages", 1}, {"tma-bulk.store", 1}, {"tma-bulk.chunks", 8}}),
      "kb1-23-softmax");
  EXPECT_NE(chunked.find("constexpr int kTmaChunks = 8;"), std::string::npos);
  EXPECT_NE(chunked.find("full[kTmaStages * kTmaChunks]"), std::string::npos);
  EXPECT_NE(chunked.find("cp.async.bulk.wait_group.read 1;"), std::string::npos);
  EXPECT_FALSE(violations(norm_genome({"tma-bulk", "split-row", "warp-shuffle"})).empty());
  EXPECT_FALSE(violations(norm_genome({"tma-bulk", "grid-split-row", "warp-shuffle"})).empty());
  // Without tma-bulk the TMA kernel is not in the source.
  const std::string f = generate_norm_candidate(
      norm_genome({"vector16-loads", "cluster-split-row", "warp-shuffle", "keep-on-chip"}),
      "kb1-23-softmax");
  EXPECT_EQ(f.find("tma_norm_kernel"), std::string::npos);
  EXPECT_EQ(f.find("run_fused"), std::string::npos);
}

// cache-streaming: the source marks last reads and the stores evict-first; without it, plain.
TEST(EvolveNormGenerator, CacheStreamingMarksLastReadsAndStores) {
  EXPECT_TRUE(norm_generated_strategies("kb1-23-softmax").count("cache-streaming"));
  EXPECT_TRUE(norm_generated_strategies("kb1-39-l2-norm").count("cache-streaming"));
  EXPECT_FALSE(norm_generated_strategies("kb1-36-rmsnorm").count("cache-streaming"));
  const Genome kept = norm_genome(
      {"vector16-loads", "cluster-split-row", "warp-shuffle", "keep-on-chip", "cache-streaming"});
  const std::string s = generate_norm_candidate(kept, "kb1-23-softmax");
  EXPECT_NE(s.find("constexpr bool kStreamHints = true;"), std::string::npos);
  EXPECT_NE(s.find("__ldcs("), std::string::npos);
  EXPECT_NE(s.find("__stcs("), std::string::npos);
  const std::string plain = generate_norm_candidate(
      norm_genome({"vector16-loads", "cluster-split-row", "warp-shuffle", "keep-on-chip"}),
      "kb1-23-softmax");
  EXPECT_NE(plain.find("constexpr bool kStreamHints = false;"), std::string::npos);
}

TEST(EvolveNormGenerator, EveryMappingCompilesAndLoads) {
  // Each mapping on a problem of each statistic, the other strategies varied between them.
  const std::vector<std::pair<std::string, Genome>> cases = {
      {"kb1-23-softmax",
       norm_genome({"vector16-loads", "cluster-split-row", "warp-shuffle", "keep-on-chip"})},
      {"kb1-24-log-softmax",
       norm_genome({"scalar-loads", "row-per-block", "shared-tree", "online-one-pass"})},
      {"kb1-35-groupnorm", norm_genome({"vector16-loads", "split-row", "warp-shuffle"})},
      {"kb1-40-layernorm",
       norm_genome({"scalar-loads", "cluster-split-row", "shared-tree", "online-one-pass"})},
      {"kb1-38-l1-norm", norm_genome({"vector16-loads", "row-per-block", "shared-tree"})},
      {"kb1-37-frobenius-norm", norm_genome({"scalar-loads", "split-row", "warp-shuffle"})},
      {"kb1-40-layernorm",
       norm_genome({"vector16-loads", "grid-split-row", "warp-shuffle", "keep-on-chip"})},
      {"kb1-35-groupnorm",
       norm_genome({"scalar-loads", "grid-split-row", "shared-tree", "online-one-pass"})},
      {"kb1-37-frobenius-norm", norm_genome({"scalar-loads", "grid-split-row", "shared-tree"})},
      {"kb1-23-softmax",
       norm_genome({"cp-async-pipeline", "grid-split-row", "shared-tree", "online-one-pass"})},
      {"kb1-39-l2-norm",
       norm_genome({"cp-async-pipeline", "grid-split-row", "warp-shuffle", "keep-on-chip"})},
      {"kb1-34-instancenorm",
       norm_genome({"cp-async-pipeline", "row-per-block", "shared-tree", "keep-on-chip"})},
      {"kb1-23-softmax",
       norm_genome({"tma-bulk", "cluster-split-row", "warp-shuffle", "keep-on-chip"})},
      {"kb1-38-l1-norm", norm_genome({"tma-bulk", "row-per-block", "shared-tree"})},
      {"kb1-34-instancenorm",
       norm_genome({"scalar-loads", "split-row", "shared-tree", "cache-streaming"})},
      {"kb1-24-log-softmax", norm_genome({"vector16-loads", "cluster-split-row", "warp-shuffle",
                                          "keep-on-chip", "cache-streaming"})},
      {"kb1-36-rmsnorm", norm_genome({"vector16-loads", "row-per-block", "warp-shuffle"})},
      {"kb1-36-rmsnorm",
       norm_genome({"scalar-loads", "row-per-block", "warp-shuffle", "keep-on-chip"})},
  };
  expect_compiles_and_loads("kiln_evolve_norm_generator", "norm", cases, generate_norm_candidate);
}

}  // namespace
}  // namespace kiln::evolve
