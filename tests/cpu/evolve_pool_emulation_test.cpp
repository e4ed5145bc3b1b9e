// warp-row-separable pooling kernels run on the CPU (issue 20; no GPU needed): each generated
// kernel's device code in tests/emulation/pool_harness.cpp, every block's threads as fibers, under
// AddressSanitizer and UBSan, against a host pooling with PyTorch's semantics on odd shapes
// (1-1030 columns, rows and depths of 1-9), with the host's grid and with 3 blocks. The windows:
// the six KernelBench problems' and others the generator accepts (strides, paddings, dilations,
// average windows whose divisor is and is not a power of two: the exact-inverse path of
// 2026-11-29 and the division beside it). The GPU tests and probes see only the problems' own
// square shapes. Planted faults it catches: the inverse used for a divisor of 3, a later
// segment's span shifted by one column (a row wider than a segment is always among the shapes), a
// row bound off by one (AddressSanitizer). With ceil_mode off a window never reaches past the
// padded end, so the clipped divisor at a row's end is never taken (the kernel keeps it for
// ceil_mode windows); a fault there cannot show.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "emulation_support.hpp"
#include "evolve/pool_generator.hpp"
#include "evolve_generator_test_support.hpp"  // genome_of

namespace kiln::evolve {
namespace {

struct PoolCase {
  std::string name;
  PoolWindow window;
  int outputs, warps, unroll_taps;
};

PoolWindow window(bool max, int dims, int kernel, int stride, int padding, int dilation) {
  PoolWindow w;
  w.max = max;
  w.dims = dims;
  w.kernel = kernel;
  w.stride = stride;
  w.padding = padding;
  w.dilation = dilation;
  return w;
}

TEST(EvolvePoolEmulation, WarpRowKernelsMatchPyTorchsPoolingOnOddShapes) {
  if (const std::string missing = missing_host_compiler(); !missing.empty())
    GTEST_SKIP() << missing;
  std::vector<PoolCase> cases;
  // The problems' own windows, at the knobs the searches kept and others.
  const std::vector<std::pair<std::string, std::vector<int>>> problems = {
      {"kb1-41-maxpool-1d", {8, 16, 0}}, {"kb1-44-avgpool-1d", {16, 4, 0}},
      {"kb1-42-maxpool-2d", {16, 4, 1}}, {"kb1-45-avgpool-2d", {4, 8, 0}},
      {"kb1-43-maxpool-3d", {2, 4, 0}},  {"kb1-46-avgpool-3d", {4, 8, 1}}};
  for (const auto& [problem, knobs] : problems) {
    const std::optional<PoolWindow> w = pool_window_of(problem);
    ASSERT_TRUE(w.has_value()) << problem;
    cases.push_back({problem, *w, knobs[0], knobs[1], knobs[2]});
  }
  // Other windows: the average with a power-of-two divisor inside the row (the exact inverse) and
  // without (the division), a stride above the kernel, padding, dilations.
  cases.push_back({"avg1d-k2-s2-p1", window(false, 1, 2, 2, 1, 1), 1, 4, 0});
  cases.push_back({"avg1d-k3-s1-p1", window(false, 1, 3, 1, 1, 1), 4, 4, 0});
  cases.push_back({"max1d-k3-s2-p1-d2", window(true, 1, 3, 2, 1, 2), 2, 8, 0});
  cases.push_back({"max1d-k2-s3-p0", window(true, 1, 2, 3, 0, 1), 8, 4, 0});
  cases.push_back({"avg2d-k2-s2-p0", window(false, 2, 2, 2, 0, 1), 2, 4, 1});
  cases.push_back({"avg2d-k3-s2-p1", window(false, 2, 3, 2, 1, 1), 4, 4, 0});
  cases.push_back({"max2d-k2-s1-p1-d3", window(true, 2, 2, 1, 1, 3), 2, 4, 1});
  cases.push_back({"avg3d-k2-s1-p1", window(false, 3, 2, 1, 1, 1), 2, 4, 0});
  cases.push_back({"max3d-k3-s2-p1-d2", window(true, 3, 3, 2, 1, 2), 1, 4, 1});
  const std::filesystem::path dir = fresh_emulation_dir("kiln_pool_emulation");
  for (const PoolCase& c : cases) {
    const Genome g = genome_of(Family::kPooling, {"scalar-loads", "warp-row-separable"},
                               {{"warp-row-separable.outputs", c.outputs},
                                {"warp-row-separable.warps", c.warps},
                                {"warp-row-separable.unroll_taps", c.unroll_taps}});
    const std::string tag = c.name + "--o" + std::to_string(c.outputs) + "-w" +
                            std::to_string(c.warps) + "-u" + std::to_string(c.unroll_taps);
    const std::string output =
        run_emulation("pool_harness.cpp",
                      generate_pool_warp_row_candidate(g, "kb1-emulated", c.window), tag, dir);
    EXPECT_NE(output.find(tag + ": 0 bad of "), std::string::npos) << output;
  }
}

// The element-per-thread and grid-stride kernel (pool_kernel: a thread a run of kRun outputs)
// on the six problems' windows: scalar runs of 1 and 4, float4 runs of 4 and 8 (whole-float4 rows
// take the vector stores, others the scalar ones: the odd widths give both).
TEST(EvolvePoolEmulation, ElementKernelsMatchPyTorchsPoolingOnOddShapes) {
  if (const std::string missing = missing_host_compiler(); !missing.empty())
    GTEST_SKIP() << missing;
  struct ElementCase {
    std::string problem, name;
    Genome genome;
    int threads;
  };
  std::vector<ElementCase> cases;
  for (const std::string problem :
       {"kb1-41-maxpool-1d", "kb1-44-avgpool-1d", "kb1-42-maxpool-2d", "kb1-45-avgpool-2d",
        "kb1-43-maxpool-3d", "kb1-46-avgpool-3d"}) {
    cases.push_back({problem, "scalar1-t128",
                     genome_of(Family::kPooling, {"scalar-loads", "element-per-thread"},
                               {{"scalar-loads.unroll", 1}, {"element-per-thread.threads", 128}}),
                     128});
    cases.push_back({problem, "vector2-stride256",
                     genome_of(Family::kPooling, {"vector16-loads", "grid-stride"},
                               {{"vector16-loads.unroll", 2},
                                {"grid-stride.threads", 256},
                                {"grid-stride.blocks_per_sm", 1}}),
                     256});
  }
  cases.push_back({"kb1-44-avgpool-1d", "scalar4-t128",
                   genome_of(Family::kPooling, {"scalar-loads", "element-per-thread"},
                             {{"scalar-loads.unroll", 4}, {"element-per-thread.threads", 128}}),
                   128});
  cases.push_back({"kb1-42-maxpool-2d", "vector1-t128",
                   genome_of(Family::kPooling, {"vector16-loads", "element-per-thread"},
                             {{"vector16-loads.unroll", 1}, {"element-per-thread.threads", 128}}),
                   128});
  const std::filesystem::path dir = fresh_emulation_dir("kiln_pool_element_emulation");
  for (const ElementCase& c : cases) {
    const std::string tag = c.problem + "--" + c.name;
    const std::string output =
        run_emulation("pool_harness.cpp", generate_pool_candidate(c.genome, c.problem), tag, dir,
                      "-DELEMENT_THREADS=" + std::to_string(c.threads));
    EXPECT_NE(output.find(tag + ": 0 bad of "), std::string::npos) << output;
  }
}

}  // namespace
}  // namespace kiln::evolve
