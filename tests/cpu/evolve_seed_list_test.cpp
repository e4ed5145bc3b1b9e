// Seed lists for `kiln evolve run|set --seeds` (issue 20): the probe-list format read line by line
// (comments, blank lines, JSON with spaces), errors that name the file and line, and the genomes
// of one problem checked against its family and the generator's allowed strategies.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "evolve/candidate_evaluator.hpp"
#include "evolve/seed_list.hpp"

namespace kiln::evolve {
namespace {

std::string write_list(const std::string& name, const std::string& text) {
  const std::filesystem::path path = std::filesystem::path(::testing::TempDir()) / name;
  std::ofstream(path) << text;
  return path.string();
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

const char* kGrid =
    R"({"family": "reduce-axis", "strategies": ["grid-split-row", "keep-on-chip", "warp-shuffle", )"
    R"("vector16-loads"], "knobs": {"grid-split-row.splits": 64, "keep-on-chip.max_row_kib": 192}})";

TEST(EvolveSeedList, ReadsTheProbeFormat) {
  const std::string path =
      write_list("seeds-ok.txt",
                 std::string("# probes\n\n  # indented comment\nkb1-40-layernorm g64 ") + kGrid +
                     "\nkb1-19-relu plain {\"family\":\"map\",\"strategies\":[\"element-per-"
                     "thread\",\"vector16-loads\"]}\n");
  const std::vector<SeedLine> lines = read_seed_list(path);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].problem, "kb1-40-layernorm");
  EXPECT_EQ(lines[0].name, "g64");
  EXPECT_EQ(lines[0].line, 4);
  EXPECT_TRUE(lines[0].genome.has("grid-split-row"));
  EXPECT_EQ(lines[0].genome.knob("grid-split-row", "splits"), 64);
  EXPECT_EQ(lines[1].line, 5);
  EXPECT_EQ(lines[1].genome.family, Family::kMap);

  // One problem's lines, checked against its generator; other problems' lines are skipped.
  const std::vector<Genome> ln = seeds_for(lines, path, "kb1-40-layernorm", Family::kReduceAxis,
                                           generated_strategies("kb1-40-layernorm"));
  ASSERT_EQ(ln.size(), 1u);
  EXPECT_EQ(ln[0], lines[0].genome);
  EXPECT_TRUE(seeds_for(lines, path, "kb1-38-l1-norm", Family::kReduceAxis,
                        generated_strategies("kb1-38-l1-norm"))
                  .empty());
}

TEST(EvolveSeedList, ErrorsNameTheFileAndLine) {
  EXPECT_NE(message_of([] { read_seed_list("/no/such/seeds.txt"); }).find("cannot be read"),
            std::string::npos);
  const std::string short_line = write_list("seeds-short.txt", "\nkb1-40-layernorm only-a-name\n");
  EXPECT_NE(message_of([&] { read_seed_list(short_line); }).find("seeds-short.txt:2: expected"),
            std::string::npos);
  const std::string bad_json = write_list("seeds-json.txt", "kb1-40-layernorm x {\"family\":\n");
  EXPECT_NE(message_of([&] { read_seed_list(bad_json); })
                .find("seeds-json.txt:1: the genome is "
                      "not valid JSON"),
            std::string::npos);

  // A genome of another family, one with a strategy the problem's generator lacks, and one that
  // breaks the catalog's constraints.
  const std::string path = write_list(
      "seeds-wrong.txt",
      std::string("kb1-19-relu grid ") + kGrid + "\nkb1-36-rmsnorm grid " + kGrid +
          "\nkb1-40-layernorm clash {\"family\":\"reduce-axis\",\"strategies\":[\"split-row\","
          "\"keep-on-chip\",\"shared-tree\",\"scalar-loads\"]}\n");
  const std::vector<SeedLine> lines = read_seed_list(path);
  EXPECT_NE(message_of([&] {
              seeds_for(lines, path, "kb1-19-relu", Family::kMap,
                        generated_strategies("kb1-19-relu"));
            })
                .find("seeds-wrong.txt:1 (kb1-19-relu grid): a reduce-axis genome, but kb1-19-relu "
                      "is a map problem"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              seeds_for(lines, path, "kb1-36-rmsnorm", Family::kReduceAxis,
                        generated_strategies("kb1-36-rmsnorm"));
            }).find("has no code for kb1-36-rmsnorm"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              seeds_for(lines, path, "kb1-40-layernorm", Family::kReduceAxis,
                        generated_strategies("kb1-40-layernorm"));
            }).find("seeds-wrong.txt:3 (kb1-40-layernorm clash): not a valid genome"),
            std::string::npos);
}

TEST(EvolveSeedList, DuplicatesCountOnce) {
  const std::string path = write_list("seeds-dup.txt", std::string("kb1-40-layernorm a ") + kGrid +
                                                           "\nkb1-40-layernorm b " + kGrid + "\n");
  EXPECT_EQ(seeds_for(read_seed_list(path), path, "kb1-40-layernorm", Family::kReduceAxis,
                      generated_strategies("kb1-40-layernorm"))
                .size(),
            1u);
}

}  // namespace
}  // namespace kiln::evolve
