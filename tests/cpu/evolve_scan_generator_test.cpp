// The scan family's generator (issue 20) on the CPU: which problems it covers, that random genomes
// of its allowed set generate, that the source follows the genome (team, load path, team scan,
// the problem's variant), and that one genome per combination compiles with nvcc and loads.
// The GPU test (EvolveGpu.ScanFamilyGeneratesCompilesAndIsJudged) judges them.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "bench/candidate_library.hpp"
#include "core/error.hpp"
#include "evolve/candidate_evaluator.hpp"
#include "evolve/genome.hpp"
#include "evolve/scan_generator.hpp"
#include "evolve_generator_test_support.hpp"

namespace kiln::evolve {
namespace {

Genome scan_genome(std::vector<std::string> strategies) {
  Genome g;
  g.family = Family::kScan;
  g.strategies = {strategies.begin(), strategies.end()};
  return g;
}

TEST(EvolveScanGenerator, TheCumulativeProblemsOnly) {
  EXPECT_FALSE(scan_kind_of("kb1-19-relu").has_value());
  EXPECT_EQ(scan_kind_of("kb1-90-cumprod")->op, "prod");
  EXPECT_TRUE(scan_kind_of("kb1-91-cumsum-reverse")->reverse);
  EXPECT_TRUE(scan_kind_of("kb1-92-cumsum-exclusive")->exclusive);
  EXPECT_TRUE(scan_kind_of("kb1-93-masked-cumsum")->masked);
  EXPECT_EQ(generated_family("kb1-89-cumsum"), Family::kScan);
  EXPECT_THROW(generate_scan_candidate(scan_genome({"scalar-loads", "row-per-warp", "shared-tree"}),
                                       "kb1-19-relu"),
               UsageError);
}

TEST(EvolveScanGenerator, RandomGenomesOfTheAllowedSetGenerate) {
  const StrategySet& allowed = scan_generated_strategies();
  Rng rng(11);
  for (int i = 0; i < 200; ++i) {
    const Genome g = random_genome(Family::kScan, rng, 0.5, &allowed);
    ASSERT_TRUE(violations(g).empty()) << g.describe();
    for (const std::string& s : g.strategies) EXPECT_TRUE(allowed.count(s)) << s;
    EXPECT_NO_THROW((void)generate_scan_candidate(g, "kb1-89-cumsum")) << g.describe();
  }
  // A strategy of the family this generator does not build is the genome's failure.
  EXPECT_THROW(generate_scan_candidate(scan_genome({"scalar-loads", "split-row", "shared-tree"}),
                                       "kb1-89-cumsum"),
               UsageError);
}

TEST(EvolveScanGenerator, SourceFollowsTheGenomeAndTheProblem) {
  Genome warp = scan_genome({"scalar-loads", "row-per-warp", "warp-shuffle"});
  warp.knobs = {{"scalar-loads.unroll", 4}, {"row-per-warp.warps_per_block", 8}};
  const std::string w = generate_scan_candidate(warp, "kb1-91-cumsum-reverse");
  EXPECT_NE(w.find("constexpr int kTeam = 32;"), std::string::npos);
  EXPECT_NE(w.find("constexpr int kTeamsPerBlock = 8;"), std::string::npos);
  EXPECT_NE(w.find("constexpr int kPerThread = 4;"), std::string::npos);
  EXPECT_NE(w.find("constexpr bool kReverse = true;"), std::string::npos);
  EXPECT_NE(w.find("__shfl_down_sync"), std::string::npos);
  EXPECT_EQ(w.find("reinterpret_cast<const float4*>"), std::string::npos);

  Genome block = scan_genome({"vector16-loads", "row-per-block", "shared-tree"});
  block.knobs = {{"vector16-loads.unroll", 2}, {"row-per-block.threads", 512}};
  const std::string b = generate_scan_candidate(block, "kb1-90-cumprod");
  EXPECT_NE(b.find("constexpr int kTeam = 512;"), std::string::npos);
  EXPECT_NE(b.find("constexpr int kPerThread = 8;"), std::string::npos);
  EXPECT_NE(b.find("a * b"), std::string::npos);
  EXPECT_NE(b.find("kIdentity = 1.0f"), std::string::npos);
  EXPECT_NE(b.find("reinterpret_cast<const float4*>"), std::string::npos);
  EXPECT_EQ(b.find("__shfl_up_sync"), std::string::npos);
  EXPECT_NE(generate_scan_candidate(block, "kb1-93-masked-cumsum").find("kMasked = true"),
            std::string::npos);
  EXPECT_EQ(b.find("cp.async"), std::string::npos);
  EXPECT_EQ(b.find("kStages"), std::string::npos);

  // cp-async-pipeline: 8 elements a thread, `stages` chunks a row staged in dynamic shared memory
  // (the mask's bytes too), the limit raised past 48 KiB.
  Genome staged = scan_genome({"cp-async-pipeline", "row-per-block", "warp-shuffle"});
  staged.knobs = {{"cp-async-pipeline.stages", 4}, {"row-per-block.threads", 1024}};
  const std::string c = generate_scan_candidate(staged, "kb1-93-masked-cumsum");
  EXPECT_NE(c.find("constexpr int kPerThread = 8;"), std::string::npos);
  EXPECT_NE(c.find("constexpr int kStages = 4;"), std::string::npos);
  EXPECT_NE(c.find("cp.async.cg.shared.global"), std::string::npos);
  EXPECT_NE(c.find("cp.async.wait_group"), std::string::npos);
  EXPECT_NE(c.find("extern __shared__"), std::string::npos);
  EXPECT_NE(c.find("cudaFuncAttributeMaxDynamicSharedMemorySize"), std::string::npos);
  EXPECT_NE(c.find("(kMasked ? 1 : 0)"), std::string::npos);
  EXPECT_NE(c.find("kTeam * kTeamsPerBlock, shared_bytes,"), std::string::npos);
  // The limit is raised at every size: 3 stages x 512 threads are exactly 48 KiB dynamic, and the
  // static scratch comes on top (a launch without the attribute fails).
  Genome edge = staged;
  edge.knobs = {{"cp-async-pipeline.stages", 3}, {"row-per-block.threads", 512}};
  EXPECT_NE(generate_scan_candidate(edge, "kb1-89-cumsum")
                .find("  if (cudaFuncSetAttribute(KILN_KERNEL(scan_kernel),"),
            std::string::npos);

  // register-prefetch: the next `chunks` chunks' loads issued into registers before the scan;
  // cache-streaming: every access evict-first. Neither without its strategy.
  Genome ahead = scan_genome(
      {"vector16-loads", "register-prefetch", "row-per-block", "warp-shuffle", "cache-streaming"});
  ahead.knobs = {{"vector16-loads.unroll", 1},
                 {"register-prefetch.chunks", 2},
                 {"row-per-block.threads", 256}};
  const std::string a = generate_scan_candidate(ahead, "kb1-93-masked-cumsum");
  EXPECT_NE(a.find("constexpr int kAhead = 2;"), std::string::npos);
  // A ring with fixed slots: nothing copied between them (a copy waits for its load).
  EXPECT_NE(a.find("float ring[kAhead + 1][kPerThread];"), std::string::npos);
  EXPECT_NE(a.find("if (c + kAhead < chunks) fetch(c + kAhead, ring[next], mring[next]);"),
            std::string::npos);
  // The masked scan: mask bytes kept as loaded, applied at the scan (not at the load).
  EXPECT_NE(a.find("unsigned int mring[kAhead + 1][kMasked ? kPerThread / 4 : 1];"),
            std::string::npos);
  EXPECT_NE(a.find("const unsigned int m = mring[s][q];"), std::string::npos);
  EXPECT_EQ(a.find("element(xr, mr"), std::string::npos);
  EXPECT_NE(a.find("float* const v = ring[s];"), std::string::npos);
  EXPECT_EQ(a.find("ahead["), std::string::npos);
  EXPECT_NE(a.find("__ldcs(p)"), std::string::npos);
  EXPECT_NE(a.find("__stcs(p, v)"), std::string::npos);
  EXPECT_EQ(a.find("cp.async"), std::string::npos);
  for (const std::string& plain : {w, b}) {
    EXPECT_EQ(plain.find("kAhead"), std::string::npos);
    EXPECT_EQ(plain.find("__ldcs"), std::string::npos);
    EXPECT_EQ(plain.find("__stcs"), std::string::npos);
  }
  // The shared-memory pipeline and the register one are one idea twice: never together.
  Genome both =
      scan_genome({"cp-async-pipeline", "register-prefetch", "row-per-block", "warp-shuffle"});
  EXPECT_FALSE(violations(both).empty());
}

TEST(EvolveScanGenerator, EveryCombinationCompilesAndLoads) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "kiln_evolve_scan_generator";
  std::filesystem::create_directories(dir);
  const std::vector<std::string> problems = {"kb1-89-cumsum", "kb1-90-cumprod",
                                             "kb1-91-cumsum-reverse", "kb1-92-cumsum-exclusive",
                                             "kb1-93-masked-cumsum"};
  int index = 0;
  for (const char* load : {"scalar-loads", "vector16-loads", "cp-async-pipeline"}) {
    for (const char* mapping : {"row-per-warp", "row-per-block"}) {
      for (const char* reduction : {"shared-tree", "warp-shuffle"}) {
        const Genome g = scan_genome({load, mapping, reduction});
        const std::string& problem = problems[index % problems.size()];
        const std::filesystem::path file = dir / fmt::format("scan_{}.cu", index++);
        std::ofstream(file) << generate_scan_candidate(g, problem);
        bench::CandidateBuild build;
        ASSERT_NO_THROW(build =
                            bench::compile_candidate(file.string(), dir.string(), "sm_90a", 300))
            << problem << ": " << g.describe();
        EXPECT_NE(bench::CandidateLibrary(build.library).entry(), nullptr);
        expect_split_build(file, file.string());
      }
    }
  }
  // The optional strategies: register-prefetch (1 and 2 chunks ahead, both load paths, both
  // mappings) and cache-streaming, on the reverse and the masked scans.
  for (const auto& [problem, strategies, chunks] :
       std::vector<std::tuple<std::string, std::vector<std::string>, int>>{
           {"kb1-91-cumsum-reverse",
            {"scalar-loads", "register-prefetch", "row-per-warp", "shared-tree"},
            2},
           {"kb1-93-masked-cumsum",
            {"vector16-loads", "register-prefetch", "row-per-block", "warp-shuffle",
             "cache-streaming"},
            1},
           {"kb1-92-cumsum-exclusive",
            {"cp-async-pipeline", "row-per-block", "warp-shuffle", "cache-streaming"},
            0}}) {
    Genome g = scan_genome(strategies);
    if (chunks > 0) g.knobs = {{"register-prefetch.chunks", chunks}};
    ASSERT_TRUE(violations(g).empty()) << g.describe();
    const std::filesystem::path file = dir / fmt::format("scan_{}.cu", index++);
    std::ofstream(file) << generate_scan_candidate(g, problem);
    bench::CandidateBuild build;
    ASSERT_NO_THROW(build = bench::compile_candidate(file.string(), dir.string(), "sm_90a", 300))
        << problem << ": " << g.describe();
    EXPECT_NE(bench::CandidateLibrary(build.library).entry(), nullptr);
    expect_split_build(file, file.string());
  }
}

}  // namespace
}  // namespace kiln::evolve
