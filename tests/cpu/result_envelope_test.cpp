// The one JSON envelope of every benchmark: provenance and name beside the benchmark's own fields.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "bench/result_envelope.hpp"
#include "core/error.hpp"

namespace kiln::bench {
namespace {

core::Provenance sample_provenance() {
  core::Provenance p;
  p.command_line = "kiln bench suite -g 4 --ranks-per-gpu 4";
  p.git_commit = "abc1234";
  p.world_size = 4;
  p.ranks_per_gpu = 4;
  return p;
}

TEST(ResultEnvelope, ProvenanceAndNameBesideTheFields) {
  const nlohmann::json j =
      result_envelope(sample_provenance(), "suite", {{"dtype", "bf16"}, {"rows", {1, 2, 3}}});
  EXPECT_EQ(j.at("benchmark"), "suite");
  EXPECT_EQ(j.at("dtype"), "bf16");
  EXPECT_EQ(j.at("rows").size(), 3u);
  EXPECT_EQ(j.at("provenance").at("commit"), "abc1234");
  EXPECT_EQ(j.at("provenance").at("ranks_per_gpu"), 4);
  EXPECT_EQ(j.at("provenance").at("timings_meaningful"), false);
}

TEST(ResultEnvelope, TheEnvelopeWinsOverAFieldOfTheSameName) {
  const nlohmann::json j = result_envelope(sample_provenance(), "reduce",
                                           {{"benchmark", "stale"}, {"provenance", "stale"}});
  EXPECT_EQ(j.at("benchmark"), "reduce");
  EXPECT_TRUE(j.at("provenance").is_object());
}

TEST(ResultEnvelope, FieldsMustBeAnObject) {
  EXPECT_THROW(result_envelope(sample_provenance(), "x", nlohmann::json::array()), Error);
}

TEST(ResultEnvelope, WritesTheFileIntoANewFolder) {
  const auto dir = std::filesystem::temp_directory_path() / "kiln-envelope-test";
  std::filesystem::remove_all(dir);
  const std::string path = (dir / "sub" / "r.json").string();
  write_result(path, sample_provenance(), "collective", {{"rows", nlohmann::json::array()}});
  std::ifstream in(path);
  const nlohmann::json back = nlohmann::json::parse(in);
  EXPECT_EQ(back.at("benchmark"), "collective");
  EXPECT_EQ(back.at("provenance").at("world_size"), 4);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kiln::bench
