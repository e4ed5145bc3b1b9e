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
#include "comm/local_launcher.hpp"
#include "core/error.hpp"
#include "core/provenance.hpp"
#include "overlap/plan_cache.hpp"
#include "overlap/tuner_profile.hpp"

namespace kiln::app {

// Runs `rank_main` on -g `gpus` local ranks (0: all visible), or on this process's rank when a
// launcher started it. `what` names the command in errors.
inline int launch_tune_ranks(int gpus, const std::string& what,
                             const std::function<int(const comm::RankInfo&)>& rank_main) {
  if (const auto launched = comm::rank_from_environment(comm::process_environment())) {
    KILN_REQUIRE(gpus == 0 || gpus == launched->world_size,
                 fmt::format("-g {}: the launcher ({}) already started {} rank(s); omit -g", gpus,
                             launched->launcher, launched->world_size));
    return rank_main(*launched);
  }
  KILN_REQUIRE(gpus >= 0, fmt::format("-g {}: must be >= 1 (or 0 for all GPUs)", gpus));
  const int visible = comm::count_visible_gpus();
  if (visible == 0) throw Error(what + " needs a GPU; none is visible");
  KILN_REQUIRE(gpus <= visible,
               fmt::format("-g {}: this host has {} visible GPU(s); accepted range 1..{}", gpus,
                           visible, visible));
  return comm::launch_local_ranks(gpus == 0 ? visible : gpus, rank_main);
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

inline overlap::PlanKey plan_key(const overlap::TunerProfile& p, const overlap::GemmShape& s) {
  return {p.device, p.world, p.op, p.dtype, s};
}

}  // namespace kiln::app
