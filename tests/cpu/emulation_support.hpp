// Shared by the emulation tests (tests/cpu/evolve_*_emulation_test.cpp): a generated kernel's
// device code compiled by the host compiler into a harness of tests/emulation/ (every block's
// threads as fibers, tests/emulation/cuda_fibers.h) under AddressSanitizer and UBSan, and run.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "core/run_command.hpp"

namespace kiln::evolve {

// The source without its host sections and #include lines: constants and device code.
inline std::string device_part(const std::string& source) {
  const std::string without_host = std::regex_replace(
      source, std::regex("// kiln-host: begin[\\s\\S]*?// kiln-host: end\n"), "");
  std::istringstream lines(without_host);
  std::string out, line;
  while (std::getline(lines, line))
    if (line.rfind("#include", 0) != 0) out += line + "\n";
  return out;
}

// Whether the host compiler the emulations need is here ("" if so, else why not).
inline std::string missing_host_compiler() {
  std::string output;
  return core::run_command("g++ --version", output) == 0 ? std::string() : "no g++ here: " + output;
}

// A fresh folder `name` in the test's temporary directory, for one test's emulation builds.
inline std::filesystem::path fresh_emulation_dir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Builds `harness` (a file of tests/emulation/) around `source`'s device code as KERNEL, named
// `tag`, in `dir` (`defines`: more -D flags for the harness), runs it and returns what it
// printed; a failed build or run fails the test.
inline std::string run_emulation(const std::string& harness, const std::string& source,
                                 const std::string& tag, const std::filesystem::path& dir,
                                 const std::string& defines = "") {
  const std::filesystem::path repo(KILN_TEST_SOURCE_DIR);
  const std::filesystem::path header = dir / (tag + ".h");
  std::ofstream(header) << device_part(source);
  const std::filesystem::path binary = dir / tag;
  std::string output;
  const int built = core::run_command(
      "g++ -std=c++20 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -w " +
          core::shell_quoted("-I" + (repo / "tests/emulation").string()) + " " +
          core::shell_quoted("-DKERNEL=\"" + header.string() + "\"") + " " +
          core::shell_quoted("-DKNAME=\"" + tag + "\"") + " " + defines + " " +
          core::shell_quoted((repo / "tests/emulation" / harness).string()) + " -o " +
          core::shell_quoted(binary.string()),
      output);
  EXPECT_EQ(built, 0) << tag << ": the emulation did not build:\n" << output.substr(0, 3000);
  if (built != 0) return output;
  output.clear();
  // Fibers switch stacks, which AddressSanitizer's use-after-return detection cannot follow.
  const int ran = core::run_command(
      "ASAN_OPTIONS=detect_stack_use_after_return=0 " + core::shell_quoted(binary.string()),
      output);
  EXPECT_EQ(ran, 0) << tag << ":\n" << output.substr(0, 3000);
  return output;
}

}  // namespace kiln::evolve
