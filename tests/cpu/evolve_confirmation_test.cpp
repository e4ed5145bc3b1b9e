// Confirmation of a search's best kernels (issue 20): which individuals are judged again, and
// which confirmed one becomes the run's result.
#include "evolve/confirmation.hpp"

#include <gtest/gtest.h>

#include <map>

#include "evolve_generator_test_support.hpp"

namespace kiln::evolve {
namespace {

Individual individual(int threads, double us, bool correct = true) {
  Individual i;
  i.genome = genome_of(Family::kMap, {"element-per-thread", "vector16-loads"},
                       {{"element-per-thread.threads", threads}});
  i.evaluation.correct = correct;
  i.evaluation.us = us;
  i.evaluation.roof_us = 10.0;
  return i;
}

TEST(EvolveConfirmation, BestAcceptedAreDistinctRankedAndSkipRejected) {
  // 256 appears twice (a later, slower copy); 1024 is fastest but rejected.
  const std::vector<Individual> history = {individual(128, 20.0),         individual(256, 12.5),
                                           individual(1024, 11.0, false), individual(256, 13.0),
                                           individual(512, 16.0),         individual(64, 25.0)};
  const std::vector<Individual> best = best_accepted(history, 3);
  ASSERT_EQ(best.size(), 3u);
  EXPECT_EQ(best[0].genome.knob("element-per-thread", "threads"), 256);
  EXPECT_DOUBLE_EQ(best[0].evaluation.us, 12.5);
  EXPECT_EQ(best[1].genome.knob("element-per-thread", "threads"), 512);
  EXPECT_EQ(best[2].genome.knob("element-per-thread", "threads"), 128);
  EXPECT_EQ(best_accepted(history, 10).size(), 4u);  // 4 distinct accepted genomes
  EXPECT_TRUE(best_accepted({individual(128, 20.0, false)}, 3).empty());
}

TEST(EvolveConfirmation, TheBestConfirmedWinsAndARejectionIsNeverChosen) {
  const std::vector<Individual> top = {individual(256, 12.0), individual(512, 13.0),
                                       individual(128, 14.0)};
  // The guarded judge: 256 rejected, 128 confirmed faster than 512.
  std::map<int, Evaluation> verdicts;
  verdicts[256] = individual(256, 12.0, false).evaluation;
  verdicts[512] = individual(512, 15.0).evaluation;
  verdicts[128] = individual(128, 14.5).evaluation;
  const std::vector<Confirmed> confirmed = confirm(
      top, [&](const Genome& g) { return verdicts.at(g.knob("element-per-thread", "threads")); });
  ASSERT_EQ(confirmed.size(), 3u);
  EXPECT_DOUBLE_EQ(confirmed[1].screened.evaluation.us, 13.0);
  EXPECT_DOUBLE_EQ(confirmed[1].confirmed.us, 15.0);
  EXPECT_EQ(best_confirmed(confirmed), 2);
  const std::vector<Confirmed> none =
      confirm({top[0]}, [&](const Genome&) { return individual(256, 12.0, false).evaluation; });
  EXPECT_EQ(best_confirmed(none), -1);
}

}  // namespace
}  // namespace kiln::evolve
