// Confirmation of a search's best kernels (issue 20): which individuals are judged again, and
// which confirmed one becomes the run's result.
#include "evolve/confirmation.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

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

Individual pooling(const std::string& mapping, int threads, double us, bool correct = true) {
  Individual i;
  i.genome =
      genome_of(Family::kPooling, {"scalar-loads", mapping}, {{mapping + ".threads", threads}});
  i.evaluation.correct = correct;
  i.evaluation.us = us;
  i.evaluation.roof_us = 10.0;
  return i;
}

TEST(EvolveConfirmation, EachWorkMappingsBestIsConfirmedBeforeTheRunnersUpOfOne) {
  // grid-stride holds the three best screened genomes; sliding-planes' best is fourth,
  // shared-tile's fifth; element-per-thread's best is under half the best's fitness; a rejected one
  // never comes.
  const std::vector<Individual> history = {
      pooling("grid-stride", 256, 10.0),          pooling("grid-stride", 128, 10.5),
      pooling("grid-stride", 512, 11.0),          pooling("sliding-planes", 256, 11.5),
      pooling("shared-tile", 256, 12.0),          pooling("element-per-thread", 256, 25.0),
      pooling("sliding-planes", 128, 9.0, false), pooling("sliding-planes", 512, 13.0)};
  const auto mapping_of = [](const Individual& i) {
    for (const char* m : {"grid-stride", "sliding-planes", "shared-tile", "element-per-thread"})
      if (i.genome.has(m)) return std::string(m);
    return std::string();
  };
  const std::vector<Individual> order = confirmation_order(history, 10);
  ASSERT_EQ(order.size(), 7u);  // every distinct accepted genome
  const std::vector<std::pair<std::string, double>> want = {
      {"grid-stride", 10.0},       {"sliding-planes", 11.5}, {"shared-tile", 12.0},
      {"grid-stride", 10.5},       {"grid-stride", 11.0},    {"sliding-planes", 13.0},
      {"element-per-thread", 25.0}};
  for (std::size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(mapping_of(order[k]), want[k].first) << k;
    EXPECT_DOUBLE_EQ(order[k].evaluation.us, want[k].second) << k;
  }
  // --confirm 2: the best, then the next mapping's best, not the best's runner-up.
  const std::vector<Individual> two = confirmation_order(history, 2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(mapping_of(two[1]), "sliding-planes");
  // One mapping only: plain fitness order.
  const std::vector<Individual> one = confirmation_order({history[0], history[1], history[2]}, 3);
  ASSERT_EQ(one.size(), 3u);
  EXPECT_DOUBLE_EQ(one[1].evaluation.us, 10.5);
  EXPECT_TRUE(confirmation_order({pooling("grid-stride", 256, 10.0, false)}, 3).empty());
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
