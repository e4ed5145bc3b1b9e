// `kiln tune plan`: the plan the overlap runtime would take for a shape, where it comes from and
// its predicted time; needs no GPU (a saved or built-in profile, or the plan cache).
#include <fmt/format.h>

#include <chrono>
#include <cstdio>

#include "apps/kiln/commands.hpp"
#include "apps/kiln/tune_common.hpp"
#include "core/dtype.hpp"
#include "core/hardware_profile.hpp"
#include "overlap/gemm_shape.hpp"
#include "tune/plan_lookup.hpp"

namespace kiln::app {
namespace {

struct PlanFlags {
  std::string op = "rs";
  std::string dtype = "bf16";
  std::vector<std::string> shapes;
  int gpus = 2;
  std::string device = "h200-sxm";
  std::string profile;
  std::string cache = tune::default_plan_cache_path();
  bool fresh = false;
  bool explain = false;
  int max_first = 2;
  int max_last = 4;
  std::string strategy = "predictive";
  std::string json_path;
};

tune::PartitionStrategy parse_strategy(const std::string& text) {
  if (text == "predictive") return tune::PartitionStrategy::kPredictive;
  if (text == "equal") return tune::PartitionStrategy::kEqualSize;
  if (text == "per-wave") return tune::PartitionStrategy::kOneWavePerGroup;
  throw UsageError("--strategy " + text + ": accepted predictive, equal, per-wave");
}

// One shape's plan: the lookup chain, or (another strategy, or --explain) the profile's tuning.
struct PlannedShape {
  tune::PlanLookup found;
  std::optional<tune::TunedPlan> tuned;
  double plan_us = 0.0;  // host time the choice took
};

PlannedShape plan_shape(const tune::PlanKey& key, const tune::PlanLookupOptions& options,
                        tune::PartitionStrategy strategy, bool explain) {
  PlannedShape p;
  const auto start = std::chrono::steady_clock::now();
  if (strategy != tune::PartitionStrategy::kPredictive || explain) {
    std::string where;
    const auto profile = tune::find_tuner_profile(key, options.profiles, &where);
    if (!profile) {
      throw UsageError(fmt::format(
          "no tuner profile for {} g{} {} {}: run `kiln tune profile` there or pass --profile",
          key.device, key.world, key.op, key.dtype));
    }
    p.tuned = tune::tune_plan(*profile, key.shape, options.limits, strategy);
    p.found = {p.tuned->chosen.plan, "profile " + where, p.tuned->chosen.predicted_us};
  } else {
    p.found = tune::lookup_plan(key, options);
  }
  p.plan_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  return p;
}

// Prints one shape's line (and with a tuned plan the candidates and the group timeline); returns
// its JSON row.
nlohmann::json report_shape(const std::string& text, const PlannedShape& p,
                            const std::string& strategy) {
  const tune::PlanLookup& found = p.found;
  fmt::print("{:>18}  {:>10}  {:9.0f}  {}  ({})\n", text,
             found.predicted_us >= 0 ? fmt::format("{:.1f} us", found.predicted_us) : "-",
             p.plan_us, overlap::to_string(found.plan), found.source);
  nlohmann::json row = {{"shape", text},
                        {"plan", overlap::to_string(found.plan)},
                        {"source", found.source},
                        {"predicted_us", found.predicted_us},
                        {"plan_time_us", p.plan_us},
                        {"strategy", strategy}};
  if (!p.tuned) return row;
  row["considered"] = nlohmann::json::array();
  for (const tune::PlanCandidate& c : p.tuned->considered) {
    fmt::print("{:>18}    {:9.1f} us  {}  (GEMM {})\n", "", c.predicted_us,
               overlap::to_string(c.plan), c.gemm_source);
    row["considered"].push_back({{"plan", overlap::to_string(c.plan)},
                                 {"predicted_us", c.predicted_us},
                                 {"gemm", c.gemm_source}});
  }
  row["excluded"] = p.tuned->excluded;
  for (const std::string& why : p.tuned->excluded) fmt::print("{:>18}    excluded: {}\n", "", why);
  for (const tune::GroupPrediction& g : p.tuned->chosen.prediction.groups) {
    fmt::print(
        "{:>18}      group: {} wave(s) {:7.2f} MiB  compute done {:8.1f}  comm {:8.1f} -> {:8.1f} "
        "us\n",
        "", g.waves, g.bytes / 1048576.0, g.compute_done * 1e6, g.comm_start * 1e6,
        g.comm_done * 1e6);
  }
  return row;
}

int run_plan(const PlanFlags& f) {
  KILN_REQUIRE(!f.shapes.empty(), "--shape: give at least one MxNxK");
  KILN_REQUIRE(f.gpus >= 1 && f.gpus <= 64, fmt::format("-g {}: accepted range 1..64", f.gpus));
  KILN_REQUIRE(
      f.max_first >= 1 && f.max_last >= 1,
      fmt::format("--max-first {} / --max-last {}: must be >= 1", f.max_first, f.max_last));
  const std::string op = overlap::overlap_op_name(overlap::parse_overlap_op(f.op, "--op"));
  const std::string dtype = core::dtype_name(core::parse_dtype(f.dtype, "-d"));
  const std::string device = core::find_profile(f.device).key;
  const tune::PartitionStrategy strategy = parse_strategy(f.strategy);
  tune::PlanLookupOptions options;
  options.cache_path = f.fresh ? std::string() : f.cache;
  options.profiles.explicit_path = f.profile;
  options.limits = {f.max_first, f.max_last};
  nlohmann::json out = nlohmann::json::array();
  fmt::print("{:>18}  {:>10}  {:>9}  {}\n", "shape", "predicted", "plan us", "plan (source)");
  for (const std::string& text : f.shapes) {
    const tune::PlanKey key{device, f.gpus, op, dtype, overlap::parse_shape(text, "--shape")};
    out.push_back(report_shape(text, plan_shape(key, options, strategy, f.explain), f.strategy));
  }
  if (!f.json_path.empty()) {
    core::write_json_file(f.json_path, out);
    fmt::print("# wrote {}\n", f.json_path);
  }
  return 0;
}

}  // namespace

void register_tune_plan(CLI::App& tune, Runner& run) {
  auto flags = std::make_shared<PlanFlags>();
  CLI::App* cmd = tune.add_subcommand(
      "plan", "the overlap plan for a shape and its predicted time (no GPU needed)");
  cmd->add_option("--op", flags->op, "rs (ReduceScatter) | ar (AllReduce)")->capture_default_str();
  cmd->add_option("-d,--datatype", flags->dtype, "bf16|fp16")->capture_default_str();
  cmd->add_option("--shape", flags->shapes, "per-GPU GEMM MxNxK, repeatable")->required();
  cmd->add_option("-g,--ngpus", flags->gpus, "world size the plan is for")->capture_default_str();
  cmd->add_option("--device", flags->device, "hardware profile key (see `kiln profiles`)")
      ->capture_default_str();
  cmd->add_option("--profile", flags->profile,
                  "tuner profile file (default: the saved one for the setting, else built-in)");
  cmd->add_option("--cache", flags->cache, "plan cache ($KILN_PLAN_CACHE)")->capture_default_str();
  cmd->add_flag("--fresh", flags->fresh, "ignore the plan cache: predict from the profile");
  cmd->add_flag("--explain", flags->explain,
                "predict from the profile and show every base plan and the group timeline");
  cmd->add_option("--max-first", flags->max_first, "most waves in the first group (S1)")
      ->capture_default_str();
  cmd->add_option("--max-last", flags->max_last, "most waves in the last group (S_P)")
      ->capture_default_str();
  cmd->add_option("--strategy", flags->strategy, "predictive | equal | per-wave")
      ->capture_default_str();
  cmd->add_option("--json", flags->json_path, "write the plans to this file");
  cmd->callback(
      [flags, &run]() { run = [flags](const Invocation&) -> int { return run_plan(*flags); }; });
}

}  // namespace kiln::app
