// The norm problems' host check of their own reference (problems/kb1_norms.cpp): it passes on the
// reference's output, and fails on a poisoned output and on one element changed near the end of
// the last segment (found by the chunked, multithreaded check of a contiguous segment as well as
// by the gathered check of a strided one).
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "bench/problem.hpp"
#include "comm/communicator.hpp"
#include "core/cuda_check.hpp"
#include "core/dtype.hpp"
#include "gpu_availability.hpp"
#include "problems/registry.hpp"

namespace {

using namespace kiln;

TEST(NormReferenceCheckGpu, PassesTheReferenceAndCatchesAChangedElement) {
  KILN_SKIP_UNLESS_GPUS(1);
  const int rc = kiln::testing::launch_test_ranks(1, [](const comm::RankInfo& info) {
    comm::Communicator comm(info, 60.0);
    cudaStream_t stream = nullptr;
    KILN_CUDA_CHECK(cudaStreamCreate(&stream));
    int failures = 0;
    // Contiguous segments (softmax rows, the Frobenius norm's whole tensor, LayerNorm) and strided
    // ones (BatchNorm's outer axes, RMSNorm's channels).
    for (const char* name : {"kb1-23-softmax", "kb1-37-frobenius-norm", "kb1-40-layernorm",
                             "kb1-33-batchnorm", "kb1-36-rmsnorm"}) {
      // Throws (failing the rank) when the registry has no such problem.
      const bench::Problem* problem =
          bench::select_problems(problems::problem_registry(), {name}).front();
      bench::ProblemSize size;
      for (const auto& s : problem->sizes())
        if (s.name == "small") size = s;
      bench::RankContext context{comm, stream, core::DType::kFp32};
      auto run = problem->start(size, context);
      run->make_inputs(7);
      run->poison_outputs();
      const std::string poisoned = run->check_reference();  // the reference has not run
      run->reference();
      const std::string passed = run->check_reference();
      // One element of the reference's output changed: the last output element lies in the last
      // segment, which the check reads whole.
      const auto outputs = run->reference_outputs();
      std::string changed = "(no reference output span)";
      if (!outputs.empty()) {
        float* last =
            static_cast<float*>(outputs.front().data) + outputs.front().bytes / sizeof(float) - 1;
        float value = 0;
        KILN_CUDA_CHECK(cudaMemcpy(&value, last, sizeof value, cudaMemcpyDeviceToHost));
        value = value * 1.5f + 1.0f;
        KILN_CUDA_CHECK(cudaMemcpy(last, &value, sizeof value, cudaMemcpyHostToDevice));
        changed = run->check_reference();
      }
      std::fprintf(stderr, "%s: poisoned [%s] passed [%s] changed [%s]\n", name, poisoned.c_str(),
                   passed.c_str(), changed.c_str());
      if (poisoned.empty() || !passed.empty() || changed.empty()) ++failures;
      // The Frobenius norm's one segment is the whole tensor, checked in chunks: the changed
      // element is named by its index in the segment (the last one).
      if (std::string(name) == "kb1-37-frobenius-norm" && !outputs.empty()) {
        const std::string last =
            fmt::format("segment 0 element {}:", outputs.front().bytes / sizeof(float) - 1);
        if (changed.find(last) == std::string::npos) {
          std::fprintf(stderr, "%s: expected [%s]\n", name, last.c_str());
          ++failures;
        }
      }
    }
    KILN_CUDA_CHECK(cudaStreamDestroy(stream));
    return failures;
  });
  EXPECT_EQ(rc, 0);
}

}  // namespace
