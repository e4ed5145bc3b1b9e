// The evolution engine's path on a GPU, per generated family (issue 20): genomes -> generated
// source -> nvcc (compiled ahead in parallel, as `kiln evolve run` does) -> `kiln bench candidate`
// judging it. Map (kb1-19-relu), middle-dimension reduction (kb1-47, kb1-51) and whole-array sum
// (reduce-sum-int32: every step of the reduction ladder) must be accepted with a time and U.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

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
  return o;
}

// Judges every genome (compiled ahead on every core) and expects each accepted.
void expect_accepted(const std::string& problem, const std::string& size,
                     const std::vector<std::pair<std::string, Genome>>& genomes) {
  const CandidateEvaluatorOptions o = options(problem, size);
  std::vector<Genome> batch;
  for (const auto& [name, g] : genomes) batch.push_back(g);
  candidate_preparer(o, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())))(batch);
  const Evaluator evaluate = candidate_evaluator(o);
  for (const auto& [name, g] : genomes) {
    const Evaluation e = evaluate(g);
    EXPECT_TRUE(e.correct) << problem << " " << name << " (" << g.describe() << "): " << e.failure;
    EXPECT_GT(e.us, 0.0) << problem << " " << name;
    EXPECT_GT(e.fitness(), 0.0) << problem << " " << name;
    std::printf("%-22s %-10s U %.3f  %9.1f us  %s\n", problem.c_str(), name.c_str(), e.fitness(),
                e.us, g.describe().c_str());
  }
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

TEST(EvolveGpu, MiddleReductionFamilyGeneratesCompilesAndIsJudged) {
  KILN_SKIP_UNLESS_GPUS(1);
  Genome warp;
  warp.family = Family::kReduceAxis;
  warp.strategies = {"scalar-loads", "row-per-warp", "shared-tree"};
  Genome split = warp;
  split.strategies = {"scalar-loads", "split-row", "shared-tree"};
  split.knobs = {{"scalar-loads.unroll", 4}, {"split-row.splits", 8}};
  expect_accepted("kb1-47-sum-reduction", "small", {{"row-per-warp", warp}, {"split", split}});
  expect_accepted("kb1-51-argmax", "small", {{"split", split}});
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
