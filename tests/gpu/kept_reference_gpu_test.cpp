// Screened judgements keep the reference's output per input seed (bench/suite.cpp): kiln's own
// solution judged again and again in one process stays correct on the kept copies, and a kept
// copy that something overwrote is caught by the run's own reference (the row stays correct),
// dropped, and made again for the next judgement.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <vector>

#include "bench/suite.hpp"
#include "comm/communicator.hpp"
#include "core/cuda_check.hpp"
#include "gpu_availability.hpp"
#include "problems/registry.hpp"

namespace {

using namespace kiln;

// kiln's own solution of `problem` at size small, screened, with the given run cache; 0 when
// every row is correct.
int judge_once(comm::Communicator& comm, const std::shared_ptr<bench::ProblemRunCache>& runs,
               const char* problem) {
  bench::SuiteOptions o;
  o.problems = {problem};
  o.sizes = {"small"};
  o.trials = 1;
  o.warmup = 1;
  o.iterations = 3;
  o.screen_timing = true;
  o.runs = runs;
  int failures = 0, rows = 0;
  bench::run_suite(comm, problems::problem_registry(), o, [&](const bench::SuiteRow& row) {
    ++rows;
    if (!row.correct) {
      ++failures;
      std::fprintf(stderr, "%s\n", bench::format_suite_row(row).c_str());
    }
  });
  return rows > 0 ? failures : 1;
}

TEST(KeptReferenceGpu, KeptCopiesServeAndAnOverwrittenOneIsCaught) {
  KILN_SKIP_UNLESS_GPUS(1);
  const int rc = kiln::testing::launch_test_ranks(1, [](const comm::RankInfo& info) {
    comm::Communicator comm(info, 60.0);
    int failures = 0;
    for (const char* problem : {"kb1-1-square-matmul", "kb1-47-sum-reduction"}) {
      const auto runs = std::make_shared<bench::ProblemRunCache>();
      failures += judge_once(comm, runs, problem);
      // The trial's seed and the screened timing's: two copies kept.
      if (runs->kept.count() != 2 || runs->kept.bytes() == 0) {
        std::fprintf(stderr, "%s: %zu kept references\n", problem, runs->kept.count());
        ++failures;
      }
      failures += judge_once(comm, runs, problem);  // on the kept copies
      // Overwrite every kept copy: the run's own reference must decide, and the keep go.
      for (core::DeviceBuffer* copy : runs->kept.buffers())
        KILN_CUDA_CHECK(cudaMemset(copy->data(), 0x7F, copy->bytes()));
      failures += judge_once(comm, runs, problem);
      if (runs->kept.count() != 0) {
        std::fprintf(stderr, "%s: overwritten copies still kept\n", problem);
        ++failures;
      }
      failures += judge_once(comm, runs, problem);  // kept again, from fresh inputs
      if (runs->kept.count() != 2) ++failures;
    }
    return failures;
  });
  EXPECT_EQ(rc, 0);
}

}  // namespace
