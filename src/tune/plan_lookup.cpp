// Plan lookup for the overlap runtime (see plan_lookup.hpp).
#include "tune/plan_lookup.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>

#include "core/error.hpp"
#include "core/hardware_profile.hpp"
#include "overlap/launch_geometry.hpp"

namespace kiln::tune {
namespace {

// A file's JSON, parsed once per version of the file (its modification time and size): the
// runtime looks its plan up at every GemmCollective construction, and parsing a 40 KB profile
// costs about half a millisecond. nullptr when the file cannot be read.
std::shared_ptr<const nlohmann::json> read_json(const std::string& path) {
  struct Entry {
    std::filesystem::file_time_type modified;
    std::uintmax_t size = 0;
    std::shared_ptr<const nlohmann::json> json;
  };
  static std::mutex mutex;
  static std::map<std::string, Entry> parsed;
  std::error_code error;
  const auto modified = std::filesystem::last_write_time(path, error);
  if (error) return nullptr;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (error) return nullptr;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    const auto it = parsed.find(path);
    if (it != parsed.end() && it->second.modified == modified && it->second.size == size) {
      return it->second.json;
    }
  }
  std::ifstream in(path);
  if (!in) return nullptr;
  std::shared_ptr<const nlohmann::json> json;
  try {
    json = std::make_shared<const nlohmann::json>(nlohmann::json::parse(in));
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("{}: not valid JSON ({})", path, e.what()));
  }
  const std::lock_guard<std::mutex> lock(mutex);
  parsed[path] = {modified, size, json};
  return json;
}

// The built-in profiles (name, profile), parsed once.
const std::vector<std::pair<std::string, TunerProfile>>& builtin_profiles() {
  static const std::vector<std::pair<std::string, TunerProfile>> profiles = [] {
    std::vector<std::pair<std::string, TunerProfile>> out;
    for (const auto& [name, text] : builtin_profile_texts()) {
      out.emplace_back(
          name, TunerProfile::from_json(nlohmann::json::parse(text), "built-in profile " + name));
    }
    return out;
  }();
  return profiles;
}

bool matches(const TunerProfile& p, const PlanKey& key) {
  return p.device == key.device && p.world == key.world && p.op == key.op && p.dtype == key.dtype;
}

int waves_of(const Plan& plan, const GemmShape& shape, int sms) {
  return overlap::host_launch_geometry(shape, plan.gemm, plan.schedule, sms).waves();
}

}  // namespace

std::string default_cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::string(xdg) + "/kiln";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::string(home) + "/.cache/kiln";
  }
  return ".kiln-cache";
}

std::string default_plan_cache_path() {
  if (const char* path = std::getenv("KILN_PLAN_CACHE"); path != nullptr && *path != '\0') {
    return path;
  }
  return default_cache_dir() + "/plans.json";
}

std::string profile_file_name(const std::string& device, int world, const std::string& op,
                              const std::string& dtype) {
  return fmt::format("{}-g{}-{}-{}.json", device, world, op, dtype);
}

std::optional<TunerProfile> find_tuner_profile(const PlanKey& key, const ProfileSearch& search,
                                               std::string* where) {
  const auto take = [&](const TunerProfile& p, const std::string& from) {
    if (where != nullptr) *where = from;
    return std::optional<TunerProfile>(p);
  };
  if (!search.explicit_path.empty()) {
    const auto json = read_json(search.explicit_path);
    if (!json) throw UsageError(fmt::format("--profile {}: cannot read it", search.explicit_path));
    const TunerProfile p = TunerProfile::from_json(*json, search.explicit_path);
    if (!matches(p, key)) {
      throw UsageError(fmt::format(
          "--profile {}: measured for {} g{} {} {}, asked for {} g{} {} {}", search.explicit_path,
          p.device, p.world, p.op, p.dtype, key.device, key.world, key.op, key.dtype));
    }
    return take(p, search.explicit_path);
  }
  const std::string saved =
      search.cache_dir + "/profiles/" + profile_file_name(key.device, key.world, key.op, key.dtype);
  if (const auto json = read_json(saved)) {
    const TunerProfile p = TunerProfile::from_json(*json, saved);
    if (matches(p, key)) return take(p, saved);
  }
  if (search.builtin) {
    for (const auto& [name, p] : builtin_profiles()) {
      if (matches(p, key)) return take(p, "built-in " + name);
    }
  }
  return std::nullopt;
}

Plan default_overlap_plan() {
  Plan plan;
  plan.copy_engine = true;
  plan.schedule.cta_cap = 0;
  return plan;
}

PlanLookup lookup_plan(const PlanKey& key, const PlanLookupOptions& options) {
  PlanCache cache;
  if (const auto json = read_json(options.cache_path)) {
    cache = PlanCache::from_json(*json, options.cache_path);
  }
  if (const CachedPlan* hit = cache.exact(key)) {
    return {overlap::parse_plan(hit->plan, options.cache_path), "cache " + options.cache_path,
            hit->predicted_us};
  }
  std::string where;
  if (const auto profile = find_tuner_profile(key, options.profiles, &where)) {
    const TunedPlan tuned = tune_plan(*profile, key.shape, options.limits);
    return {tuned.chosen.plan, "profile " + where, tuned.chosen.predicted_us};
  }
  int sms = options.device_sms;
  if (sms <= 0) {
    try {
      sms = core::find_profile(key.device).sm_count;
    } catch (const UsageError&) {
      sms = 0;
    }
  }
  double distance = 0.0;
  if (const CachedPlan* near = cache.nearest(key, options.max_neighbour_distance, &distance);
      near != nullptr && sms > 0) {
    const Plan plan = overlap::parse_plan(near->plan, options.cache_path);
    int sum = 0;
    for (int g : plan.partition) sum += g;
    if (plan.partition.empty() || sum == waves_of(plan, key.shape, sms)) {
      return {plan,
              fmt::format("neighbour {}x{}x{} (distance {:.2f})", near->key.shape.m,
                          near->key.shape.n, near->key.shape.k, distance),
              -1.0};
    }
  }
  return fallback_plan(key, sms);
}

PlanLookup fallback_plan(const PlanKey& key, int sms) {
  const std::string source = "default (no cache entry, profile or fitting neighbour)";
  Plan plan = default_overlap_plan();
  if (key.op != "ar" || key.world < 3 || sms <= 0) return {plan, source, -1.0};
  plan.copy_engine = false;  // the serial form: every SM, then one NCCL call (is_serial_plan)
  plan.partition = {waves_of(plan, key.shape, sms)};
  return {plan,
          fmt::format("{}: the serial form for AllReduce at {} ranks; `kiln tune profile -g {} "
                      "--op ar` measures whether an overlapped plan beats it",
                      source, key.world, key.world),
          -1.0};
}

}  // namespace kiln::tune
