// The scan family's generated kernels run on the CPU (issue 20; no GPU needed): each genome's
// source without its host sections is compiled with the host compiler into
// tests/emulation/scan_harness.cpp, where tests/emulation/cuda_fibers.h runs every block's threads
// as fibers, under AddressSanitizer and UBSan. 27 widths from 1 to 4097 columns, aligned and not,
// exact comparison with the host's scan and a poisoned guard after the output: the partial chunks,
// unaligned rows, rows shorter than a chunk or than register-prefetch's ring, and reverse,
// exclusive, masked and product scans that the GPU tests' square presets never reach (a review's
// emulation of 140 configurations, made a test). cp-async-pipeline (inline PTX) is left to the GPU
// tests.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "emulation_support.hpp"
#include "evolve/scan_generator.hpp"
#include "evolve_generator_test_support.hpp"  // genome_of

namespace kiln::evolve {
namespace {

struct EmulatedCase {
  std::string problem, name;
  Genome genome;
};

TEST(EvolveScanEmulation, GeneratedScansAreExactOnOddWidthsOnTheCpu) {
  if (const std::string missing = missing_host_compiler(); !missing.empty())
    GTEST_SKIP() << missing;
  const auto scan = [](std::set<std::string> strategies, std::map<std::string, int> knobs) {
    return genome_of(Family::kScan, std::move(strategies), std::move(knobs));
  };
  // Both load paths at several widths a thread, both mappings, both team scans, the prefetch ring
  // one and two chunks deep (the masked scan's word and byte rings), and the plain loop.
  const std::vector<EmulatedCase> cases = {
      {"kb1-89-cumsum", "plain-vec2-block",
       scan({"vector16-loads", "row-per-block", "warp-shuffle"},
            {{"vector16-loads.unroll", 2}, {"row-per-block.threads", 128}})},
      {"kb1-89-cumsum", "ring1-scalar8-warp",
       scan({"scalar-loads", "register-prefetch", "row-per-warp", "shared-tree"},
            {{"scalar-loads.unroll", 8},
             {"register-prefetch.chunks", 1},
             {"row-per-warp.warps_per_block", 2}})},
      {"kb1-90-cumprod", "ring2-vec1-block",
       scan({"vector16-loads", "register-prefetch", "row-per-block", "shared-tree"},
            {{"register-prefetch.chunks", 2}, {"row-per-block.threads", 128}})},
      {"kb1-91-cumsum-reverse", "ring2-vec1-block",
       scan({"vector16-loads", "register-prefetch", "row-per-block", "warp-shuffle"},
            {{"register-prefetch.chunks", 2}, {"row-per-block.threads", 128}})},
      {"kb1-91-cumsum-reverse", "ring1-scalar2-warp",
       scan({"scalar-loads", "register-prefetch", "row-per-warp", "warp-shuffle"},
            {{"scalar-loads.unroll", 2},
             {"register-prefetch.chunks", 1},
             {"row-per-warp.warps_per_block", 2}})},
      {"kb1-92-cumsum-exclusive", "ring1-vec4-block",
       scan({"vector16-loads", "register-prefetch", "row-per-block", "warp-shuffle",
             "cache-streaming"},
            {{"vector16-loads.unroll", 4},
             {"register-prefetch.chunks", 1},
             {"row-per-block.threads", 128}})},
      {"kb1-93-masked-cumsum", "ring1-vec1-block",
       scan({"vector16-loads", "register-prefetch", "row-per-block", "warp-shuffle"},
            {{"register-prefetch.chunks", 1}, {"row-per-block.threads", 128}})},
      {"kb1-93-masked-cumsum", "ring2-scalar4-warp",
       scan({"scalar-loads", "register-prefetch", "row-per-warp", "shared-tree"},
            {{"scalar-loads.unroll", 4},
             {"register-prefetch.chunks", 2},
             {"row-per-warp.warps_per_block", 2}})},
      {"kb1-93-masked-cumsum", "plain-scalar1-block",
       scan({"scalar-loads", "row-per-block", "shared-tree"},
            {{"scalar-loads.unroll", 1}, {"row-per-block.threads", 128}})}};
  const std::filesystem::path dir = fresh_emulation_dir("kiln_scan_emulation");
  for (const EmulatedCase& c : cases) {
    const std::string tag = c.problem + "--" + c.name;
    const std::string output =
        run_emulation("scan_harness.cpp", generate_scan_candidate(c.genome, c.problem), tag, dir);
    EXPECT_NE(output.find(tag + ": 0 bad of 54 runs"), std::string::npos) << output;
  }
}

}  // namespace
}  // namespace kiln::evolve
