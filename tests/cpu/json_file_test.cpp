// core::write_json_file without a GPU: a regular file is replaced whole through a rename (nothing
// left beside it), a device such as /dev/null is written as it is, and an unwritable place is
// named in the error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/provenance.hpp"

namespace kiln::core {
namespace {

TEST(JsonFile, ReplacedWholeThroughARename) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("kiln-json-file-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "out.json").string();
  std::ofstream(path) << "{ an older, longer and broken report";
  write_json_file(path, {{"rows", {1, 2, 3}}});
  std::ifstream in(path);
  EXPECT_EQ(nlohmann::json::parse(in)["rows"].size(), 3u);
  EXPECT_FALSE(std::filesystem::exists(path + ".partial"));
  EXPECT_NO_THROW(write_json_file("/dev/null", {{"a", 1}}));  // a device: written in place
  try {
    write_json_file((dir / "no-such-folder" / "x.json").string(), {{"a", 1}});
    FAIL() << "wrote into a folder that does not exist";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-folder"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kiln::core
