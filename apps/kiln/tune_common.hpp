// What the `kiln tune` subcommands share: the rank launch (-g N, or a launcher's environment),
// the machine key of a profile, and reading/writing profiles and the plan cache.
#pragma once

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "comm/communicator.hpp"
#include "comm/launch_env.hpp"
#include "comm/rank_launch.hpp"
#include "core/error.hpp"
#include "core/provenance.hpp"
#include "tune/plan_cache.hpp"
#include "tune/tuner_profile.hpp"

namespace kiln::app {

// Runs `rank_main` on -g `gpus` local ranks (0: all visible), or on this process's rank when a
// launcher started it. `what` names the command in errors. Ranks may not share a GPU: the tuner
// keeps what it measures (profiles, plan cache), and time-sliced ranks measure nothing useful.
inline int launch_tune_ranks(int gpus, const std::string& what,
                             const std::function<int(const comm::RankInfo&)>& rank_main) {
  comm::RankRequest request;
  request.command = what;
  request.gpus = gpus;
  request.allow_shared_gpus = false;
  return comm::run_ranks(request, comm::resolve_ranks(request), rank_main);
}

inline nlohmann::json read_json_file(const std::string& path, const std::string& argument) {
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("{} {}: cannot read it", argument, path));
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("{} {}: not valid JSON ({})", argument, path, e.what()));
  }
}

inline void ensure_parent_dir(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
}

// Writes `text` to `path` (creating its folder) and says so.
inline void write_text_file(const std::string& path, const std::string& text) {
  ensure_parent_dir(path);
  std::ofstream out(path);
  out << text;
  if (!out) throw Error("cannot write " + path);
  fmt::print("# wrote {}\n", path);
}

inline tune::PlanKey plan_key(const tune::TunerProfile& p, const overlap::GemmShape& s) {
  return {p.device, p.world, p.op, p.dtype, s};
}

}  // namespace kiln::app
