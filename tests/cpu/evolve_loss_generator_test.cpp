// The loss family's generator (issue 20) on the CPU: which problems it covers and with which
// allowed set, that random genomes of each set generate, that the source follows the genome
// (mapping, completion, load path, grid) and the problem (term, inputs, scale), and that one genome
// per mapping and loss compiles with nvcc and loads. The GPU test
// (EvolveGpu.LossFamilyGeneratesCompilesAndIsJudged) judges them.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "bench/candidate_library.hpp"
#include "core/error.hpp"
#include "evolve/candidate_evaluator.hpp"
#include "evolve/genome.hpp"
#include "evolve/loss_generator.hpp"
#include "evolve_generator_test_support.hpp"

namespace kiln::evolve {
namespace {

Genome loss_genome(std::set<std::string> strategies, std::map<std::string, int> knobs = {}) {
  return genome_of(Family::kReduceAxis, std::move(strategies), std::move(knobs));
}

const std::vector<std::string>& loss_problems() {
  static const std::vector<std::string> problems = {
      "kb1-94-mse-loss",    "kb1-95-cross-entropy-loss",  "kb1-96-huber-loss",
      "kb1-98-kl-div-loss", "kb1-99-triplet-margin-loss", "kb1-100-hinge-loss"};
  return problems;
}

TEST(EvolveLossGenerator, TheLossProblemsOnly) {
  EXPECT_FALSE(loss_kind_of("kb1-23-softmax").has_value());
  for (const std::string& p : loss_problems()) {
    EXPECT_TRUE(loss_kind_of(p).has_value()) << p;
    EXPECT_EQ(generated_family(p), Family::kReduceAxis) << p;
    EXPECT_EQ(&generated_strategies(p), &loss_generated_strategies(p)) << p;
  }
  EXPECT_TRUE(loss_kind_of("kb1-95-cross-entropy-loss")->per_row);
  EXPECT_TRUE(loss_kind_of("kb1-100-hinge-loss")->needs_column);
  // Tiles of the flat array only where the term needs neither its row nor its column.
  EXPECT_TRUE(loss_generated_strategies("kb1-96-huber-loss").count("block-tiles"));
  EXPECT_FALSE(loss_generated_strategies("kb1-99-triplet-margin-loss").count("block-tiles"));
  EXPECT_FALSE(loss_generated_strategies("kb1-100-hinge-loss").count("block-tiles"));
  // Float atomics would make the scalar depend on timing.
  EXPECT_FALSE(loss_generated_strategies("kb1-94-mse-loss").count("atomic-combine"));
  EXPECT_THROW(loss_generated_strategies("kb1-19-relu"), UsageError);
  EXPECT_THROW(generate_loss_candidate(loss_genome({"scalar-loads", "row-per-warp", "shared-tree"}),
                                       "kb1-23-softmax"),
               UsageError);
}

TEST(EvolveLossGenerator, RandomGenomesOfEachAllowedSetGenerate) {
  Rng rng(29);
  for (const std::string& p : loss_problems()) {
    const StrategySet& allowed = loss_generated_strategies(p);
    for (int i = 0; i < 60; ++i) {
      const Genome g = random_genome(Family::kReduceAxis, rng, 0.5, &allowed);
      ASSERT_TRUE(violations(g).empty()) << g.describe();
      for (const std::string& s : g.strategies) EXPECT_TRUE(allowed.count(s)) << p << ": " << s;
      EXPECT_NO_THROW((void)generate_loss_candidate(g, p)) << p << ": " << g.describe();
    }
  }
  EXPECT_THROW(generate_loss_candidate(loss_genome({"scalar-loads", "block-tiles", "shared-tree"}),
                                       "kb1-95-cross-entropy-loss"),
               UsageError);
}

TEST(EvolveLossGenerator, SourceFollowsTheGenomeAndTheProblem) {
  const Genome tiles = loss_genome(
      {"vector16-loads", "block-tiles", "warp-shuffle", "last-block-combine", "persistent-grid"},
      {{"vector16-loads.unroll", 2},
       {"block-tiles.threads", 512},
       {"persistent-grid.blocks_per_sm", 2}});
  const std::string t = generate_loss_candidate(tiles, "kb1-98-kl-div-loss");
  EXPECT_NE(t.find("constexpr int kThreads = 512;"), std::string::npos);
  EXPECT_NE(t.find("constexpr bool kTiles = true;"), std::string::npos);
  EXPECT_NE(t.find("constexpr int kUnroll = 2;"), std::string::npos);
  EXPECT_NE(t.find("constexpr int kBlocksPerSm = 2;"), std::string::npos);
  EXPECT_NE(t.find("constexpr bool kLastBlock = true;"), std::string::npos);
  EXPECT_NE(t.find("x1 * klog_ratio(x1, x0)"), std::string::npos);
  EXPECT_NE(t.find("? logf(r) : logf(a) - logf(b);"), std::string::npos);
  EXPECT_NE(t.find("g.scale = 1.0 / static_cast<double>(rows);"), std::string::npos);
  EXPECT_NE(t.find("__shfl_down_sync"), std::string::npos);

  const Genome warp = loss_genome({"scalar-loads", "row-per-warp", "shared-tree"},
                                  {{"row-per-warp.warps_per_block", 8}});
  const std::string w = generate_loss_candidate(warp, "kb1-95-cross-entropy-loss");
  EXPECT_NE(w.find("constexpr int kThreads = 256;"), std::string::npos);
  EXPECT_NE(w.find("constexpr int kTeam = 32;"), std::string::npos);
  EXPECT_NE(w.find("constexpr bool kLastBlock = false;"), std::string::npos);
  EXPECT_NE(w.find("constexpr bool kPerRow = true;"), std::string::npos);
  EXPECT_NE(w.find("constexpr int kBlocksPerSm = 0;"), std::string::npos);
  EXPECT_NE(w.find("g.targets = static_cast<const long long*>(a->inputs[1]);"), std::string::npos);
  EXPECT_NE(w.find("log(static_cast<double>(row.b))"), std::string::npos);

  const std::string h = generate_loss_candidate(
      loss_genome({"vector16-loads", "row-per-block", "shared-tree"}), "kb1-100-hinge-loss");
  EXPECT_NE(h.find("__ldg(g.in1 + j)"), std::string::npos);  // the target of the column
  EXPECT_NE(h.find("reinterpret_cast<const float4*>(g.in1) + qq"), std::string::npos);
  EXPECT_NE(h.find("static_cast<unsigned long long>(cols) * sizeof(float)"), std::string::npos);
  const std::string triplet =
      generate_loss_candidate(loss_genome({"vector16-loads", "row-per-warp", "warp-shuffle"}),
                              "kb1-99-triplet-margin-loss");
  EXPECT_NE(triplet.find("g.in2 = static_cast<const float*>(a->inputs[2]);"), std::string::npos);
  EXPECT_NE(triplet.find("+ 1e-6f"), std::string::npos);
}

// The KL divergence's logarithm of a ratio: logf of an IEEE division, or with fast-log (its option
// alone) __logf of __fdividef.
TEST(EvolveLossGenerator, KlDivergenceTakesFastLog) {
  EXPECT_TRUE(loss_generated_strategies("kb1-98-kl-div-loss").count("fast-log"));
  EXPECT_FALSE(loss_generated_strategies("kb1-95-cross-entropy-loss").count("fast-log"));
  EXPECT_FALSE(loss_generated_strategies("kb1-96-huber-loss").count("fast-log"));
  const std::string plain = generate_loss_candidate(
      loss_genome({"vector16-loads", "row-per-block", "warp-shuffle"}), "kb1-98-kl-div-loss");
  const std::string fast = generate_loss_candidate(
      loss_genome({"vector16-loads", "row-per-block", "warp-shuffle", "fast-log"}),
      "kb1-98-kl-div-loss");
  EXPECT_NE(plain.find("constexpr bool kFastLog = false;"), std::string::npos);
  EXPECT_NE(fast.find("constexpr bool kFastLog = true;"), std::string::npos);
  EXPECT_NE(fast.find("return __logf(r);"), std::string::npos);
  // Subnormal and huge operands (and ratios) take log a - log b.
  EXPECT_NE(fast.find("if (b >= 1.17549435e-38f && b < 8.50705917e37f) {"), std::string::npos);
  for (const std::string* s : {&plain, &fast})
    EXPECT_NE(s->find("? logf(r) : logf(a) - logf(b);"), std::string::npos);
  EXPECT_NE(fast.find("x1 * klog_ratio(x1, x0)"), std::string::npos);
  EXPECT_THROW(generate_loss_candidate(
                   loss_genome({"scalar-loads", "row-per-warp", "warp-shuffle", "fast-log"}),
                   "kb1-96-huber-loss"),
               UsageError);
}

// Cross entropy: a 16-byte vector's four logits update the running maximum once (one rescale at
// most), and fast-exp, its option alone, puts the exponentials on the special-function unit.
TEST(EvolveLossGenerator, CrossEntropyUpdatesAVectorAtOnceAndTakesFastExp) {
  EXPECT_TRUE(loss_generated_strategies("kb1-95-cross-entropy-loss").count("fast-exp"));
  EXPECT_FALSE(loss_generated_strategies("kb1-99-triplet-margin-loss").count("fast-exp"));
  EXPECT_FALSE(loss_generated_strategies("kb1-94-mse-loss").count("fast-exp"));
  EXPECT_THROW(generate_loss_candidate(
                   loss_genome({"scalar-loads", "row-per-warp", "warp-shuffle", "fast-exp"}),
                   "kb1-94-mse-loss"),
               UsageError);
  const std::string plain = generate_loss_candidate(
      loss_genome({"vector16-loads", "row-per-warp", "warp-shuffle"}), "kb1-95-cross-entropy-loss");
  const std::string fast = generate_loss_candidate(
      loss_genome({"vector16-loads", "row-per-warp", "warp-shuffle", "fast-exp"}),
      "kb1-95-cross-entropy-loss");
  EXPECT_NE(plain.find("constexpr bool kFastExp = false;"), std::string::npos);
  EXPECT_NE(fast.find("constexpr bool kFastExp = true;"), std::string::npos);
  EXPECT_NE(fast.find("ex2.approx.ftz.f32"), std::string::npos);
  for (const std::string* s : {&plain, &fast}) {
    EXPECT_NE(s->find("const float m4 = fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w));"),
              std::string::npos);
    EXPECT_NE(s->find("acc.b += kexp(x0 - acc.a);"), std::string::npos);  // the scalar path
    // Masked (-inf) logits first: nothing added while the maximum is -inf (no NaN).
    EXPECT_NE(s->find("} else if (acc.a != -INFINITY) {"), std::string::npos);
    EXPECT_NE(s->find("if (acc.a != -INFINITY)\n            acc.b += (kexp(v.x - acc.a)"),
              std::string::npos);
  }
  // The other losses keep the element-wise update on their vectors.
  const std::string mse = generate_loss_candidate(
      loss_genome({"vector16-loads", "row-per-warp", "warp-shuffle"}), "kb1-94-mse-loss");
  EXPECT_EQ(mse.find("m4"), std::string::npos);
  EXPECT_NE(mse.find("const float x0 = (&v0[u].x)[i];"), std::string::npos);
}

TEST(EvolveLossGenerator, EveryMappingCompilesAndLoads) {
  const std::vector<std::pair<std::string, Genome>> cases = {
      {"kb1-94-mse-loss", loss_genome({"vector16-loads", "block-tiles", "warp-shuffle",
                                       "last-block-combine", "persistent-grid"})},
      {"kb1-95-cross-entropy-loss", loss_genome({"vector16-loads", "row-per-warp", "shared-tree"})},
      {"kb1-95-cross-entropy-loss",
       loss_genome({"vector16-loads", "row-per-warp", "warp-shuffle", "fast-exp"})},
      {"kb1-96-huber-loss", loss_genome({"scalar-loads", "row-per-block", "warp-shuffle"})},
      {"kb1-98-kl-div-loss", loss_genome({"scalar-loads", "block-tiles", "shared-tree"})},
      {"kb1-98-kl-div-loss",
       loss_genome({"vector16-loads", "row-per-block", "warp-shuffle", "fast-log"})},
      {"kb1-99-triplet-margin-loss",
       loss_genome({"scalar-loads", "row-per-block", "shared-tree", "last-block-combine"})},
      {"kb1-100-hinge-loss",
       loss_genome({"vector16-loads", "row-per-warp", "warp-shuffle", "persistent-grid"})},
  };
  expect_compiles_and_loads("kiln_evolve_loss_generator", "loss", cases, generate_loss_candidate);
}

}  // namespace
}  // namespace kiln::evolve
