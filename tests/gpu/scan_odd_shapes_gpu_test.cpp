// The scan family's generated kernels on shapes the problems' presets never have (issue 20): the
// presets are 2048x2048 and 32768x32768, multiples of every chunk and of 4, so a row's partial last
// chunk, the element-by-element path of rows that are not whole float4s, rows shorter than one
// chunk or than register-prefetch's ring never run in the judged tests (review of 3e8d4ef). Here
// each kernel is built whole (nvcc) and called directly on odd shapes, into a poisoned output, and
// compared exactly with a scan on the host (inputs whose partial results are exact in fp32). In a
// forked child (tests/gpu/child_process.hpp): the test process itself never initialises CUDA, so
// rank tests may follow it in one process.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../cpu/evolve_generator_test_support.hpp"  // genome_of
#include "bench/candidate_library.hpp"
#include "child_process.hpp"
#include "core/cuda_check.hpp"
#include "core/device_buffer.hpp"
#include "core/stream.hpp"
#include "evolve/scan_generator.hpp"
#include "gpu_availability.hpp"
#include "kiln/candidate.h"

namespace kiln::evolve {
namespace {

// The problem's scan on the host, in double precision, in scan order.
std::vector<double> host_scan(const ScanKind& kind, const std::vector<float>& x,
                              const std::vector<unsigned char>& mask, long long rows,
                              long long cols) {
  std::vector<double> y(x.size());
  const bool prod = kind.op == "prod";
  for (long long r = 0; r < rows; ++r) {
    double run = prod ? 1.0 : 0.0;
    for (long long k = 0; k < cols; ++k) {
      const long long j = r * cols + (kind.reverse ? cols - 1 - k : k);
      const double v = kind.masked ? x[j] * static_cast<double>(mask[j]) : x[j];
      const double next = prod ? run * v : run + v;
      y[j] = kind.exclusive ? run : next;
      run = next;
    }
  }
  return y;
}

// Runs `library`'s kernel on rows x cols of `problem` once; "" or the first mismatch.
std::string run_once(const bench::CandidateLibrary& library, const std::string& problem,
                     const ScanKind& kind, long long rows, long long cols, unsigned seed) {
  const std::size_t n = static_cast<std::size_t>(rows * cols);
  std::vector<float> x(n);
  std::vector<unsigned char> mask(n, 1);
  std::mt19937 random(seed);
  // Values whose every partial result is exact in fp32 whatever the order of combination, so that
  // the comparison is exact: small integers for the sums, and for cumprod factors of 1 with a
  // tenth of halvings and doublings (a row of 4097 stays far inside fp32's exponents).
  std::uniform_int_distribution<int> integer(-8, 8), choice(0, 19);
  for (float& v : x) {
    if (kind.op == "prod") {
      const int c = choice(random);
      v = c == 0 ? 0.5f : c == 1 ? 2.0f : 1.0f;
    } else {
      v = static_cast<float>(integer(random));
    }
  }
  if (kind.masked)
    for (unsigned char& m : mask) m = static_cast<unsigned char>(random() & 1u);
  // The output with a guard after it, poisoned too: a write past the end shows there.
  constexpr std::size_t kGuard = 256;
  core::DeviceBuffer dx(n * sizeof(float)), dm(n), dy((n + kGuard) * sizeof(float));
  KILN_CUDA_CHECK(cudaMemcpy(dx.data(), x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  KILN_CUDA_CHECK(cudaMemcpy(dm.data(), mask.data(), n, cudaMemcpyHostToDevice));
  KILN_CUDA_CHECK(cudaMemset(dy.data(), 0xff, (n + kGuard) * sizeof(float)));  // NaN poison
  core::Stream stream;
  const void* inputs[] = {dx.data(), dm.data()};
  void* outputs[] = {dy.data()};
  const unsigned long long input_bytes[] = {n * sizeof(float), n};
  const unsigned long long output_bytes[] = {n * sizeof(float)};
  const char* names[] = {"rows", "cols"};
  const long long dims[] = {rows, cols};
  KilnCandidateArgs args{};
  args.abi_version = KILN_CANDIDATE_ABI_VERSION;
  args.world = 1;
  args.dtype = KILN_FP32;
  args.problem = problem.c_str();
  args.size = "odd";
  args.num_dims = 2;
  args.dim_names = names;
  args.dims = dims;
  args.num_inputs = kind.masked ? 2 : 1;
  args.inputs = inputs;
  args.input_bytes = input_bytes;
  args.num_outputs = 1;
  args.outputs = outputs;
  args.output_bytes = output_bytes;
  args.call = 1;
  args.stream = stream.get();
  const int returned = library.entry()(&args);
  KILN_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  if (returned != 0) return "the entry returned " + std::to_string(returned);
  std::vector<float> y(n + kGuard);
  KILN_CUDA_CHECK(
      cudaMemcpy(y.data(), dy.data(), (n + kGuard) * sizeof(float), cudaMemcpyDeviceToHost));
  for (std::size_t i = n; i < n + kGuard; ++i) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &y[i], sizeof bits);
    if (bits != 0xffffffffu)
      return "wrote past the output's end, " + std::to_string(i - n) + " floats on";
  }
  const std::vector<double> want = host_scan(kind, x, mask, rows, cols);
  for (std::size_t i = 0; i < n; ++i)
    if (!(static_cast<double>(y[i]) == want[i]))  // exact (the values above), NaN poison fails
      return "row " + std::to_string(i / cols) + ", column " + std::to_string(i % cols) + ": " +
             std::to_string(y[i]) + " for " + std::to_string(want[i]);
  return "";
}

int check_odd_shapes() {
  const auto scan = [](std::set<std::string> strategies, std::map<std::string, int> knobs) {
    return genome_of(Family::kScan, std::move(strategies), std::move(knobs));
  };
  // register-prefetch 1 and 2 ahead on both load paths and both mappings (the masked scan's mask
  // ring included), the plain and staged forms beside them.
  const std::vector<std::pair<std::string, Genome>> genomes = {
      {"ring1-vec-block",
       scan({"vector16-loads", "register-prefetch", "row-per-block", "warp-shuffle"},
            {{"register-prefetch.chunks", 1}, {"row-per-block.threads", 128}})},
      {"ring2-vec-block", scan({"vector16-loads", "register-prefetch", "row-per-block",
                                "shared-tree", "cache-streaming"},
                               {{"register-prefetch.chunks", 2},
                                {"vector16-loads.unroll", 2},
                                {"row-per-block.threads", 256}})},
      {"ring2-scalar-warp",
       scan({"scalar-loads", "register-prefetch", "row-per-warp", "warp-shuffle"},
            {{"register-prefetch.chunks", 2},
             {"scalar-loads.unroll", 4},
             {"row-per-warp.warps_per_block", 4}})},
      {"ring1-scalar-warp",
       scan({"scalar-loads", "register-prefetch", "row-per-warp", "shared-tree"},
            {{"register-prefetch.chunks", 1},
             {"scalar-loads.unroll", 1},
             {"row-per-warp.warps_per_block", 2}})},
      {"plain-vec-block",
       scan({"vector16-loads", "row-per-block", "warp-shuffle"}, {{"row-per-block.threads", 256}})},
      {"staged-block", scan({"cp-async-pipeline", "row-per-block", "warp-shuffle"},
                            {{"cp-async-pipeline.stages", 3}, {"row-per-block.threads", 128}})}};
  // Rows of one element, shorter than a chunk, not whole float4s, whole float4s with a partial
  // last chunk, a chunk's multiple plus one, and long enough that every ring reuses its slots.
  const std::vector<std::pair<long long, long long>> shapes = {
      {3, 1}, {5, 7}, {4, 1003}, {3, 1028}, {2, 3001}, {2, 4097}, {1, 10001}};
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "kiln_scan_odd_shapes";
  std::filesystem::create_directories(dir);
  // Every genome on the plain cumsum; the three prefetch forms (the mask's word and byte rings)
  // on the variants.
  struct Case {
    std::string problem, name;
    Genome genome;
    bench::CandidateBuild build;
  };
  std::vector<Case> cases;
  for (const char* problem : {"kb1-89-cumsum", "kb1-90-cumprod", "kb1-91-cumsum-reverse",
                              "kb1-92-cumsum-exclusive", "kb1-93-masked-cumsum"})
    for (const auto& [name, genome] : genomes)
      if (std::string(problem) == "kb1-89-cumsum" || name.rfind("ring", 0) == 0)
        cases.push_back({problem, name, genome, {}});
  // Built whole by nvcc, several at a time (the test's time is the compiles).
  std::vector<std::thread> builders;
  std::vector<std::string> build_errors(cases.size());
  const unsigned width = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
  for (unsigned w = 0; w < width; ++w)
    builders.emplace_back([&, w] {
      for (std::size_t i = w; i < cases.size(); i += width) {
        const std::filesystem::path file = dir / (cases[i].problem + "--" + cases[i].name + ".cu");
        std::ofstream(file) << generate_scan_candidate(cases[i].genome, cases[i].problem);
        try {
          cases[i].build = bench::compile_candidate(file.string(), dir.string(), "sm_90a", 300);
        } catch (const std::exception& e) {
          build_errors[i] = e.what();
        }
      }
    });
  for (std::thread& b : builders) b.join();
  int failures = 0, runs = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    if (!build_errors[i].empty()) {
      ++failures;
      std::printf("%s %s: not built: %s\n", c.problem.c_str(), c.name.c_str(),
                  build_errors[i].substr(0, 300).c_str());
      continue;
    }
    const ScanKind kind = *scan_kind_of(c.problem);
    const bench::CandidateLibrary library(c.build.library);
    unsigned seed = 1;
    for (const auto& [rows, cols] : shapes) {
      const std::string failure = run_once(library, c.problem, kind, rows, cols, seed++);
      ++runs;
      if (!failure.empty()) {
        ++failures;
        std::printf("%s %s %lldx%lld: %s\n", c.problem.c_str(), c.name.c_str(), rows, cols,
                    failure.c_str());
      }
    }
  }
  std::printf("%d of %d runs matched the host scan\n", runs - failures, runs);
  return failures == 0 ? 0 : 2;
}

TEST(ScanOddShapesGpu, GeneratedScansMatchTheHostOnPartialChunksAndShortRows) {
  KILN_SKIP_UNLESS_GPUS(1);
  EXPECT_EQ(kiln::testing::run_in_child_process(check_odd_shapes), 0);
}

}  // namespace
}  // namespace kiln::evolve
