// The benchmark harness on 2 GPUs: every problem's reference passes its own host check and
// every kiln solution matches it, over trials and after timing (small sizes, few iterations), and
// the reference is timed both as the solution is and back to back.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "bench/problem.hpp"
#include "bench/suite.hpp"
#include "comm/communicator.hpp"
#include "comm/local_launcher.hpp"
#include "gpu_availability.hpp"
#include "problems/registry.hpp"

namespace {

using namespace kiln;

TEST(SuiteGpu, ReferencesAndSolutionsAgreeOnTwoRanks) {
  KILN_SKIP_UNLESS_RANKS(2);
  const int rc = kiln::testing::launch_test_ranks(2, [](const comm::RankInfo& info) {
    comm::Communicator comm(info, 60.0);
    bench::SuiteOptions o;
    o.sizes = {"16K", "1M", "4M/16", "1Kx32K", "4096x8192x2048"};
    o.trials = 3;
    o.warmup = 2;
    o.iterations = 5;
    int failures = 0;
    const auto rows =
        bench::run_suite(comm, problems::problem_registry(), o, [&](const bench::SuiteRow& row) {
          // The reference is timed twice: judged like the solution (the speedup's) and back to
          // back, each over every timed call.
          const bool timed_alike =
              row.reference_us.count == o.iterations &&
              row.reference_steady_us.count == o.iterations && row.reference_us.median > 0 &&
              row.reference_steady_us.median > 0 &&
              row.speedup == row.reference_us.median / row.solution_us.median &&
              // two sample sets, not one reported twice
              (row.reference_us.min != row.reference_steady_us.min ||
               row.reference_us.max != row.reference_steady_us.max);
          // The overlap solutions name the plan they run; the chunked one (no plan) names its
          // algorithm.
          const bool overlap = row.problem.rfind("tp-gemm-", 0) == 0;
          const bool named =
              !overlap ||
              (row.solution == "kiln-chunked"
                   ? row.solution_note.find("cuBLAS per destination chunk") != std::string::npos
                   : row.solution_note.rfind("plan tile=", 0) == 0);
          if (!row.correct || !row.reference_check.empty() || !timed_alike || !named) {
            ++failures;
            std::fprintf(stderr, "rank %d: %s\n", comm.rank(),
                         bench::format_suite_row(row).c_str());
          }
        });
    // Every problem at its sizes among o.sizes, every solution.
    std::size_t expected = 0;
    for (const auto& p : problems::problem_registry())
      for (const auto& size : p->sizes())
        if (std::find(o.sizes.begin(), o.sizes.end(), size.name) != o.sizes.end())
          expected += p->solutions().size();
    if (rows.size() != expected || expected == 0) ++failures;
    return failures == 0 ? 0 : 1;
  });
  EXPECT_EQ(rc, 0);
}

}  // namespace
