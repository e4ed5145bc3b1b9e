// The split build on a GPU (bench/split_build.hpp, include/kiln/candidate_split.h): a marked
// candidate built split (NVRTC + the host compiler, the cubin embedded) and whole (nvcc) gives the
// same output, through a plain launch, a template kernel's launch and KILN_KERNEL; a launch whose
// argument differs in size from the kernel's parameter (an int for a long long, which <<<>>>
// would convert) fails in the split build instead of passing garbage, and works whole.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "bench/candidate_library.hpp"
#include "core/cuda_check.hpp"
#include "core/device_buffer.hpp"
#include "core/stream.hpp"
#include "gpu_availability.hpp"

namespace kiln::bench {
namespace {

// y = 3x: a copy through copy_kernel<1>, then the scale; $N_TYPE is n's type on the host side.
const char* const kSource = R"(// kiln-host: begin
#include <cuda_runtime.h>

#include "kiln/candidate.h"
// kiln-host: end
#include "kiln/candidate_split.h"

constexpr int kThreads = 128;
struct Scale {
  float by;
};

// kiln-device: begin
template <int V>
__global__ void copy_kernel(const float* x, float* y, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i * V < n) y[i * V] = x[i * V];
}
__global__ void scale_kernel(float* y, long long n, Scale s) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = y[i] * s.by + (-INFINITY < 0.0f ? 0.0f : 1.0f);
}
// kiln-device: end

// kiln-host: begin
extern "C" int kiln_candidate_abi_version(void) { return KILN_CANDIDATE_ABI_VERSION; }

extern "C" int kiln_candidate_run(const KilnCandidateArgs* a) {
  const float* x = static_cast<const float*>(a->inputs[0]);
  float* y = static_cast<float*>(a->outputs[0]);
  const long long count = static_cast<long long>(a->output_bytes[0] / sizeof(float));
  $N_TYPE n = static_cast<$N_TYPE>(count);
  cudaStream_t stream = static_cast<cudaStream_t>(a->stream);
  if (cudaFuncSetAttribute(KILN_KERNEL(scale_kernel), cudaFuncAttributeMaxDynamicSharedMemorySize,
                           1024) != cudaSuccess)
    return 3;
  const unsigned blocks = static_cast<unsigned>((count + kThreads - 1) / kThreads);
  KILN_LAUNCH(copy_kernel<1>, blocks, kThreads, 0, stream, x, y, count);
  KILN_LAUNCH(scale_kernel, blocks, kThreads, 0, stream, y, n, Scale{3.0f});
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
// kiln-host: end
)";

// Builds the source with n of `n_type` (split or whole) and runs it once on fresh inputs into a
// poisoned output: the entry's return, and 0 only if every element is 3x.
int build_and_run(const std::string& n_type, bool split, std::string& failure) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                                    ("kiln_split_gpu_" + n_type + (split ? "_split" : "_whole"));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string source = kSource;
  for (std::size_t at; (at = source.find("$N_TYPE")) != std::string::npos;)
    source.replace(at, 7, n_type);
  std::ofstream(dir / "candidate.cu") << source;
  const CandidateBuild build =
      compile_candidate((dir / "candidate.cu").string(), dir.string(), "sm_90a", 300, "", split);
  if (split != (build.command.rfind("NVRTC", 0) == 0)) {
    failure = "built the other way: " + build.command + "\n" + build.log;
    return -1;
  }
  const CandidateLibrary library(build.library);
  const std::size_t n = 1000003;  // not a multiple of the block
  std::vector<float> x(n), y(n);
  std::mt19937 random(5);
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  for (float& v : x) v = uniform(random);
  core::DeviceBuffer dx(n * sizeof(float)), dy(n * sizeof(float));
  KILN_CUDA_CHECK(cudaMemcpy(dx.data(), x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  KILN_CUDA_CHECK(cudaMemset(dy.data(), 0xff, n * sizeof(float)));  // NaN poison
  core::Stream stream;
  const void* inputs[] = {dx.data()};
  void* outputs[] = {dy.data()};
  const unsigned long long bytes[] = {n * sizeof(float)};
  KilnCandidateArgs args{};
  args.abi_version = KILN_CANDIDATE_ABI_VERSION;
  args.world = 1;
  args.dtype = KILN_FP32;
  args.num_inputs = 1;
  args.inputs = inputs;
  args.input_bytes = bytes;
  args.num_outputs = 1;
  args.outputs = outputs;
  args.output_bytes = bytes;
  args.call = 1;
  args.stream = stream.get();
  const int returned = library.entry()(&args);
  KILN_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  KILN_CUDA_CHECK(cudaMemcpy(y.data(), dy.data(), n * sizeof(float), cudaMemcpyDeviceToHost));
  if (returned != 0) return returned;
  for (std::size_t i = 0; i < n; ++i)
    if (y[i] != 3.0f * x[i]) {
      failure = "element " + std::to_string(i) + ": " + std::to_string(y[i]) + " for " +
                std::to_string(3.0f * x[i]);
      return -2;
    }
  return 0;
}

int check_builds() {
  int failures = 0;
  for (const auto& [n_type, split, expected] :
       {std::tuple<std::string, bool, int>{"long long", true, 0},
        {"long long", false, 0},
        {"int", false, 0},    // <<<>>> converts the int
        {"int", true, 1}}) {  // the split launch refuses it: the entry's launch check fails
    std::string failure;
    const int returned = build_and_run(n_type, split, failure);
    std::printf("n as %-9s %-5s build: returned %d %s\n", n_type.c_str(), split ? "split" : "whole",
                returned, failure.c_str());
    if (returned != expected) ++failures;
  }
  return failures;
}

TEST(SplitBuildGpu, SameOutputAsTheWholeBuildAndArgumentSizesChecked) {
  KILN_SKIP_UNLESS_GPUS(1);
  EXPECT_EQ(
      ::kiln::testing::launch_test_ranks(1, [](const comm::RankInfo&) { return check_builds(); }),
      0);
}

}  // namespace
}  // namespace kiln::bench
