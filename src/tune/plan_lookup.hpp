// How an overlap call finds its plan without being told (issue 4): the plan cache's exact entry
// for the shape; else a fresh prediction from the machine's tuner profile (a saved one, else one
// built into kiln); else the nearest tuned neighbour's plan when its groups fit this shape's waves;
// else kiln's default. Every answer says where it came from. Host logic only: works without a GPU.
//
// Files: the cache is $KILN_PLAN_CACHE, else <cache dir>/plans.json; profiles are
// <cache dir>/profiles/<device>-g<world>-<op>-<dtype>.json, where <cache dir> is
// $XDG_CACHE_HOME/kiln or ~/.cache/kiln. `kiln tune profile` writes both.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "overlap/plan.hpp"
#include "tune/plan_cache.hpp"
#include "tune/tuner_profile.hpp"

namespace kiln::tune {

// The runtime's values that the tuner reads and writes.
using overlap::Plan;

std::string default_cache_dir();
std::string default_plan_cache_path();
std::string profile_file_name(const std::string& device, int world, const std::string& op,
                              const std::string& dtype);

// Profiles compiled into kiln from data/tuner/*.json (name, JSON text).
const std::vector<std::pair<std::string, std::string>>& builtin_profile_texts();

struct ProfileSearch {
  std::string explicit_path;  // --profile: this file only (an error if unreadable)
  std::string cache_dir = default_cache_dir();
  bool builtin = true;
};

// The profile for this device, world, op and dtype; `where` says which file or built-in one.
// Throws kiln::UsageError when an explicit file cannot be read or does not match the key.
std::optional<TunerProfile> find_tuner_profile(const PlanKey& key, const ProfileSearch& search,
                                               std::string* where);

struct PlanLookupOptions {
  std::string cache_path = default_plan_cache_path();
  ProfileSearch profiles;
  double max_neighbour_distance = 0.7;  // ~ one dimension doubled (ln 2 = 0.69)
  PartitionLimits limits;
  int device_sms = 0;  // for geometry when no profile says; 0: the device key's spec sheet
};

struct PlanLookup {
  Plan plan;
  std::string source;  // "cache", "profile <where>", "neighbour MxNxK (distance d)", "default"
  double predicted_us = -1.0;  // < 0: no prediction
};

PlanLookup lookup_plan(const PlanKey& key, const PlanLookupOptions& options);

// kiln's plan when nothing is known: copy engines, every SM, one group per wave (the family that
// won every issue shape on 2xH200 in issue 3, docs/results/2026-11-23-overlap/).
Plan default_overlap_plan();

// lookup_plan's last answer, where nothing is known about this device and world: the default
// above, except AllReduce at 3 or more ranks, which takes the serial form (GEMM on every SM, one
// NCCL call; is_serial_plan). The copy-engine exchange sends every group to each of the world-1
// peers unpaced, and at 4 ranks the default ran 0.375x and 0.857x cuBLAS + NCCL (4xH100,
// 4096x8192x2048 and 8192^3, 2026-11-27, docs/results/2026-11-27-h100-x4-x2/) where ReduceScatter's
// ran 0.79-1.39x and 2 ranks' AllReduce 0.99-1.27x. The serial form's signaling version then ran
// 0.673x and 0.935x (x4-call3 there, its slot layout's reorder and CUTLASS's GEMM); GemmCollective
// now runs that form as cuBLAS + NCCL itself. `sms` <= 0 (unknown) keeps the default.
PlanLookup fallback_plan(const PlanKey& key, int sms);

}  // namespace kiln::tune
