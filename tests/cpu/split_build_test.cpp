// The split build of a marked candidate (bench/split_build.hpp): the two views of a source, the
// kernels its host code names, and whole builds (NVRTC + the host compiler, no GPU needed), with
// the fall back to nvcc where NVRTC cannot build the device code.
#include "bench/split_build.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench/candidate_library.hpp"
#include "core/error.hpp"

namespace kiln::bench {
namespace {

// A marked candidate: y = 2x through a kernel and a template kernel, one launch each way.
const char* const kMarked = R"(// kiln-host: begin
#include <cuda_runtime.h>

#include "kiln/candidate.h"
// kiln-host: end
#include "kiln/candidate_split.h"

constexpr int kThreads = 128;
struct Scale {
  float by;
};

// kiln-device: begin
__device__ __forceinline__ float twice(float v, Scale s) { return v * s.by; }
__global__ void scale_kernel(const float* x, float* y, long long n, Scale s) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = twice(x[i], s) + (INFINITY > 0.0f ? 0.0f : 1.0f);
}
template <int V>
__global__ void copy_kernel(const float* x, float* y, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i * V < n) y[i * V] = x[i * V];
}
// kiln-device: end

// kiln-host: begin
extern "C" int kiln_candidate_abi_version(void) { return KILN_CANDIDATE_ABI_VERSION; }

extern "C" int kiln_candidate_run(const KilnCandidateArgs* a) {
  const float* x = static_cast<const float*>(a->inputs[0]);
  float* y = static_cast<float*>(a->outputs[0]);
  long long n = static_cast<long long>(a->output_bytes[0] / sizeof(float));
  cudaStream_t stream = static_cast<cudaStream_t>(a->stream);
  const Scale s{2.0f};
  if (cudaFuncSetAttribute(KILN_KERNEL(scale_kernel), cudaFuncAttributeMaxDynamicSharedMemorySize,
                           0) != cudaSuccess)
    return 3;
  KILN_LAUNCH(copy_kernel<1>, static_cast<unsigned>((n + kThreads - 1) / kThreads), kThreads, 0,
              stream, x, y, n);
  KILN_LAUNCH(scale_kernel, static_cast<unsigned>((n + kThreads - 1) / kThreads), kThreads, 0,
              stream, x, y, n, s);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
// kiln-host: end
)";

TEST(SplitBuild, TheTwoViewsEmptyTheOtherSideKeepingLines) {
  const std::string source =
      "#include \"kiln/candidate_split.h\"\n"
      "// kiln-host: begin\n"
      "#include <cstring>\n"
      "// kiln-host: end\n"
      "struct S { int a; };\n"
      "  // kiln-device: begin  \n"
      "__global__ void k(S s) {}\n"
      "// kiln-device: end\n"
      "void run() { KILN_LAUNCH(k, 1, 1, 0, 0, S{1}); }\n";
  const auto split = split_device_and_host(source, "x.cu");
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->device,
            "#include \"kiln/candidate_split.h\"\n\n\n\nstruct S { int a; };\n"
            "  // kiln-device: begin  \n__global__ void k(S s) {}\n// kiln-device: end\n"
            "void run() { KILN_LAUNCH(k, 1, 1, 0, 0, S{1}); }\n");
  EXPECT_EQ(split->host,
            "#include \"kiln/candidate_split.h\"\n// kiln-host: begin\n#include <cstring>\n"
            "// kiln-host: end\nstruct S { int a; };\n\n\n\n"
            "void run() { KILN_LAUNCH(k, 1, 1, 0, 0, S{1}); }\n");
  EXPECT_EQ(split->kernels, std::vector<std::string>{"k"});
  // No device region: not marked (the whole-file build).
  EXPECT_FALSE(split_device_and_host("// kiln-host: begin\n// kiln-host: end\n", "x.cu"));
}

TEST(SplitBuild, NamesTheKernelsOfEachMacro) {
  const std::string host =
      "KILN_LAUNCH(a, dim3(1, 2), 32, 0, s, x, f(y, z));\n"
      "KILN_LAUNCH( b<4> , 1, 1, 0, s, x);\n"
      "if (KILN_LAUNCH_EX(&config, c, x, y) != cudaSuccess) return 1;\n"
      "cudaFuncSetAttribute(KILN_KERNEL(d), attr, 1); KILN_KERNEL(a);\n"
      "MY_KILN_LAUNCH(e, 1); KILN_LAUNCHES(f);\n";
  EXPECT_EQ(launched_kernels(host), (std::vector<std::string>{"a", "b<4>", "c", "d"}));
}

TEST(SplitBuild, RefusesUnbalancedNestedOrUnnamedRegions) {
  const auto message = [](const std::string& source) {
    try {
      (void)split_device_and_host(source, "--source x.cu");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_NE(message("// kiln-device: begin\nint a;\n").find("without its end"), std::string::npos);
  EXPECT_NE(message("int a;\n// kiln-host: end\n").find("x.cu:2:"), std::string::npos);
  EXPECT_NE(message("// kiln-device: begin\n// kiln-host: begin\n").find("not yet ended"),
            std::string::npos);
  EXPECT_NE(message("// kiln-device: begin\n__global__ void k() {}\n// kiln-device: end\n")
                .find("names no kernel"),
            std::string::npos);
}

std::filesystem::path fresh_dir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// NVRTC and the host compiler build it; the library carries the cubin and the names' table and
// exports the entry point. A second build is a reuse; a whole-file build is not one.
TEST(SplitBuild, BuildsALoadableLibraryWithItsCubin) {
  const std::filesystem::path dir = fresh_dir("kiln_split_build");
  const std::string source = (dir / "marked.cu").string();
  std::ofstream(source) << kMarked;
  const CandidateBuild build = compile_candidate(source, dir.string(), "sm_90a", 120, "", true);
  EXPECT_EQ(build.command.rfind("NVRTC", 0), 0u) << build.command;
  EXPECT_EQ(build.log.find("split build failed"), std::string::npos) << build.log;
  void* library = dlopen(build.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  EXPECT_NE(dlsym(library, "kiln_candidate_run"), nullptr);
  dlclose(library);
  EXPECT_GT(std::filesystem::file_size(dir / "marked.cubin"), 1000u);
  std::ifstream host(dir / "marked.host.cpp");
  const std::string host_text((std::istreambuf_iterator<char>(host)),
                              std::istreambuf_iterator<char>());
  EXPECT_NE(host_text.find(".incbin"), std::string::npos);
  EXPECT_NE(host_text.find("\"copy_kernel<1>\" \"\\0\" \"_Z11copy_kernelILi1EEvPKfPfx\""),
            std::string::npos)
      << host_text;
  EXPECT_EQ(host_text.find("__global__"), std::string::npos);  // device code emptied
  EXPECT_NE(compile_candidate(source, dir.string(), "sm_90a", 120, "", true).log.find("reused"),
            std::string::npos);
  const CandidateBuild whole = compile_candidate(source, dir.string(), "sm_90a", 300);
  EXPECT_EQ(whole.log.find("reused"), std::string::npos);
  EXPECT_NE(whole.command.find("nvcc"), std::string::npos);
  EXPECT_NE(CandidateLibrary(whole.library).entry(), nullptr);
}

// Device code NVRTC cannot build (a standard header it lacks) is built whole by nvcc instead,
// and the log says why; a candidate nvcc rejects too is rejected.
TEST(SplitBuild, FallsBackToNvccAndStillRejectsBrokenCode) {
  const std::filesystem::path dir = fresh_dir("kiln_split_fallback");
  std::string needs_std = kMarked;
  needs_std.replace(needs_std.find("// kiln-device: begin\n"), 22,
                    "// kiln-device: begin\n#include <type_traits>\n"
                    "static_assert(std::is_same<int, int>::value, \"\");\n");
  std::ofstream(dir / "std.cu") << needs_std;
  const CandidateBuild build =
      compile_candidate((dir / "std.cu").string(), dir.string(), "sm_90a", 300, "", true);
  EXPECT_NE(build.log.find("the split build failed"), std::string::npos) << build.log;
  EXPECT_NE(build.log.find("type_traits"), std::string::npos) << build.log;
  EXPECT_NE(CandidateLibrary(build.library).entry(), nullptr);
  // Host code only nvcc can build (a <<<>>> launch): the host compiler fails, nvcc builds it whole.
  std::string host_needs_nvcc = kMarked;
  host_needs_nvcc.replace(host_needs_nvcc.find("  KILN_LAUNCH(copy_kernel<1>,"), 0,
                          "  copy_kernel<1><<<1, 1, 0, stream>>>(x, y, 0);\n");
  std::ofstream(dir / "host.cu") << host_needs_nvcc;
  const CandidateBuild host_build =
      compile_candidate((dir / "host.cu").string(), dir.string(), "sm_90a", 300, "", true);
  EXPECT_NE(host_build.log.find("the host compiler failed"), std::string::npos) << host_build.log;
  EXPECT_EQ(host_build.command.rfind("timeout", 0), 0u) << host_build.command;
  EXPECT_NE(host_build.command.find("nvcc"), std::string::npos) << host_build.command;
  EXPECT_NE(CandidateLibrary(host_build.library).entry(), nullptr);
  std::string broken = kMarked;
  broken.replace(broken.find("return v * s.by;"), 16, "return v * s.missing;");
  std::ofstream(dir / "broken.cu") << broken;
  EXPECT_THROW(
      compile_candidate((dir / "broken.cu").string(), dir.string(), "sm_90a", 300, "", true),
      CandidateBuildError);
}

}  // namespace
}  // namespace kiln::bench
