// The preparer's batch judgement when the judge server ends during a batch: the verdicts written
// stand, the candidate being judged is left to be judged alone, and the rest go to a new server at
// once instead of a fresh process each (candidate_evaluator.cpp). The server is a stand-in script
// speaking the request protocol (bench/judge_requests.hpp), so no GPU is needed; the candidates
// are real generated kernels, compiled by nvcc. Also: the server started ahead, while the batch
// compiles, is the one that judges it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "evolve/candidate_evaluator.hpp"
#include "evolve/genome.hpp"
#include "evolve/map_generator.hpp"

namespace kiln::evolve {
namespace {

TEST(EvolveBatchReserve, AServerEndedMidBatchLeavesOnlyItsCandidateToBeJudgedAlone) {
  CandidateEvaluatorOptions o;
  o.problem = "kb1-19-relu";
  o.folder = (std::filesystem::path(::testing::TempDir()) / "kiln_evolve_reserve").string();
  std::filesystem::remove_all(o.folder);
  std::filesystem::create_directories(o.folder);
  // The stand-in judge: the first server started ends (exit 3) at its batch's second candidate;
  // every other candidate gets a verdict file.
  const std::string marker = o.folder + "/crashed-once";
  const std::string script = o.folder + "/stand_in_kiln.sh";
  std::ofstream(script) << R"(while [ $# -gt 0 ]; do [ "$1" = --serve ] && dir=$2; shift; done
i=0; tab=$(printf '\t')
while [ ! -e "$dir/stop" ]; do
  if [ -e "$dir/request-$i" ]; then
    n=0
    while IFS="$tab" read -r name lib json; do
      n=$((n+1))
      if [ $n = 2 ] && [ ! -e ")"
                        << marker << R"(" ]; then touch ")" << marker << R"("; exit 3; fi
      echo "{\"rows\": []}" > "$json"
    done < "$dir/request-$i"
    echo judged > "$dir/done-$i"; i=$((i+1))
  fi
  sleep 0.005
done
)";
  std::filesystem::permissions(script, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::add);
  o.kiln = script;
  o.serve = true;
  o.batch = std::make_shared<BatchVerdicts>();
  Rng rng(21);
  std::vector<Genome> batch;
  while (batch.size() < 4) {
    const Genome g = random_genome(Family::kMap, rng, 0.5, &map_generated_strategies());
    if (std::none_of(batch.begin(), batch.end(), [&](const Genome& b) { return b == g; }))
      batch.push_back(g);
  }
  candidate_preparer(o, 2)(batch);
  ASSERT_TRUE(std::filesystem::exists(marker)) << "the stand-in never ended a server";
  // The first judged by the first server, the second left to be judged alone, the third and the
  // fourth by the second server.
  EXPECT_EQ(o.batch->judged.count(batch[0].hash()), 1u);
  EXPECT_EQ(o.batch->judged.count(batch[1].hash()), 0u);
  EXPECT_EQ(o.batch->judged.count(batch[2].hash()), 1u);
  EXPECT_EQ(o.batch->judged.count(batch[3].hash()), 1u);
  // Two servers: the one started ahead while the batch compiled (it must outlive the compiling
  // threads) and its replacement.
  const std::string serve = o.folder + "/serve-" + std::to_string(getpid()) + "-";
  EXPECT_TRUE(std::filesystem::exists(serve + "1"));
  EXPECT_FALSE(std::filesystem::exists(serve + "2"));
}

}  // namespace
}  // namespace kiln::evolve
