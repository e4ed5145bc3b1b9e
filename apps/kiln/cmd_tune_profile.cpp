// `kiln tune profile`: measures the tuner's offline profile on this machine (latency curves of the
// per-group calls, GEMM profiles per shape and base plan, SMs NCCL holds), saves it, and puts the
// predicted plan of every profiled shape in the plan cache.
#include <fmt/format.h>

#include <cstdio>

#include "apps/kiln/commands.hpp"
#include "apps/kiln/tune_common.hpp"
#include "comm/rank_provenance.hpp"
#include "core/progress_bar.hpp"
#include "overlap/gemm_shape.hpp"
#include "tune/plan_lookup.hpp"
#include "tune/tune_measure.hpp"
#include "tune/tune_validate.hpp"

namespace kiln::app {
namespace {

struct ProfileFlags {
  std::string op = "rs";
  std::string dtype = "bf16";
  std::string layout = "nk";
  std::vector<std::string> shapes;
  std::vector<std::string> base_plans;
  int gpus = 0;
  int warmup = 3;
  int iterations = 10;
  int gemm_iterations = 4, rounds = 6;
  int points_per_octave = 4;
  std::string out;
  std::string cache = tune::default_plan_cache_path();
  bool no_cache = false;
  bool no_sm_probe = false;
  bool no_gemm_search = false;
  double timeout = 60.0;
};

tune::TuneProfileOptions to_options(const ProfileFlags& f) {
  tune::TuneProfileOptions o;
  o.op = overlap::parse_overlap_op(f.op, "--op");
  o.dtype = core::parse_dtype(f.dtype, "-d");
  KILN_REQUIRE(o.dtype == core::DType::kBf16 || o.dtype == core::DType::kFp16,
               "-d " + f.dtype + ": accepted bf16, fp16");
  o.layout = overlap::parse_weight_layout(f.layout, "--layout");
  for (const std::string& s : f.shapes) o.shapes.push_back(overlap::parse_shape(s, "--shape"));
  if (o.shapes.empty()) {
    o.shapes = overlap::default_overlap_shapes();
    for (const auto& s : tune::default_validation_shapes()) o.shapes.push_back(s);
  }
  for (const std::string& p : f.base_plans) {
    overlap::Plan plan = overlap::parse_plan(p, "--base-plan");
    plan.partition.clear();
    o.base_plans.push_back(plan);
  }
  if (o.base_plans.empty()) o.base_plans = tune::default_base_plans();
  KILN_REQUIRE(f.warmup >= 0 && f.iterations >= 1,
               fmt::format("-w {} / -n {}: need -w >= 0 and -n >= 1", f.warmup, f.iterations));
  KILN_REQUIRE(f.points_per_octave >= 1 && f.points_per_octave <= 16,
               fmt::format("--points-per-octave {}: accepted range 1..16", f.points_per_octave));
  o.warmup = f.warmup;
  o.iterations = f.iterations;
  KILN_REQUIRE(
      f.gemm_iterations >= 1 && f.rounds >= 1,
      fmt::format("--gemm-iters {} / --rounds {}: both must be >= 1", f.gemm_iterations, f.rounds));
  o.gemm_iterations = f.gemm_iterations;
  o.rounds = f.rounds;
  o.points_per_octave = f.points_per_octave;
  o.probe_nccl_sms = !f.no_sm_probe;
  o.search_gemm = !f.no_gemm_search;
  return o;
}

// Prints the plan the new profile predicts for each shape and, unless --no-cache, records it in
// the plan cache.
void predict_and_cache(const tune::TunerProfile& profile,
                       const std::vector<overlap::GemmShape>& shapes, const ProfileFlags& f) {
  fmt::print("# predicted plans:\n");
  tune::PlanCache cache;
  if (!f.no_cache) {
    std::ifstream in(f.cache);
    if (in) cache = tune::PlanCache::from_json(read_json_file(f.cache, "--cache"), f.cache);
  }
  for (const overlap::GemmShape& s : shapes) {
    const tune::TunedPlan tuned = tune::tune_plan(profile, s, {});
    fmt::print("{:>18}  {:9.1f} us  {}\n", overlap::shape_name(s), tuned.chosen.predicted_us,
               overlap::to_string(tuned.chosen.plan));
    cache.put({plan_key(profile, s), overlap::to_string(tuned.chosen.plan),
               tuned.chosen.predicted_us, -1.0});
  }
  if (!f.no_cache) {
    ensure_parent_dir(f.cache);
    core::write_json_file(f.cache, cache.to_json());
    fmt::print("# updated plan cache {}\n", f.cache);
  }
}

int rank_main(const comm::RankInfo& info, const ProfileFlags& f, const tune::TuneProfileOptions& o,
              core::Provenance provenance) {
  comm::Communicator comm(info, f.timeout);
  const bool printer = comm.rank() == 0;
  // Curves (copy engines, NCCL beside a capped GEMM, NCCL unlimited for the serial plan): ~13
  // octaves x points each; the bar's total is an estimate, refined by the rate.
  const double units = tune::profile_units(o, 3, 13 * o.points_per_octave + 1);
  if (printer) {
    fmt::print(
        "# kiln tune profile: GEMM + {} {}, {} rank(s), {} shape(s) x {} base plan(s); about {} "
        "units of work, ~{} (estimate: 0.1 s per unit)\n",
        f.op, f.dtype, comm.size(), o.shapes.size(), o.base_plans.size(), units,
        core::format_duration(0.1 * units));
    std::fflush(stdout);
  }
  core::ProgressBar bar("profile", units, printer);
  tune::TunerProfile profile = tune::measure_tuner_profile(
      comm, o, [&](double u, const std::string& s) { bar.advance(u, s); });
  bar.finish();
  if (!printer) return 0;
  comm::add_rank_provenance(provenance, comm);
  // Keep what the measurement recorded (the GEMM search's choices) beside the run's provenance.
  nlohmann::json measured = profile.provenance;
  profile.provenance = core::to_json(provenance);
  if (measured.is_object()) {
    for (const auto& [key, value] : measured.items()) profile.provenance[key] = value;
  }

  fmt::print("{}", tune::describe_profile(profile));
  const std::string out =
      !f.out.empty()
          ? f.out
          : tune::default_cache_dir() + "/profiles/" +
                tune::profile_file_name(profile.device, profile.world, profile.op, profile.dtype);
  ensure_parent_dir(out);
  core::write_json_file(out, profile.to_json());
  fmt::print("# wrote profile {}\n", out);

  predict_and_cache(profile, o.shapes, f);
  return 0;
}

}  // namespace

void register_tune_profile(CLI::App& tune, Runner& run) {
  auto flags = std::make_shared<ProfileFlags>();
  CLI::App* cmd = tune.add_subcommand(
      "profile", "measure the tuner's profile: collective latency curves, GEMM profiles, NCCL SMs");
  cmd->add_option("--op", flags->op, "rs (ReduceScatter) | ar (AllReduce)")->capture_default_str();
  cmd->add_option("-d,--datatype", flags->dtype, "bf16|fp16")->capture_default_str();
  cmd->add_option("--layout", flags->layout, "nk | kn (how B is stored)")->capture_default_str();
  cmd->add_option("--shape", flags->shapes,
                  "per-GPU GEMM MxNxK to profile, repeatable (default: the overlap issue's six "
                  "shapes and validate's twelve)");
  cmd->add_option("--base-plan", flags->base_plans,
                  "plan to profile without its groups, repeatable (default: comm=ce cap 0/128 x "
                  "swizzle 1/8, comm=nccl cap 124 swizzle 8, and for an AllReduce on a "
                  "power-of-two world comm=ce2 cap 0/128 swizzle 8); plans that cannot run a "
                  "shape at this world size are left out for it");
  cmd->add_option("-g,--ngpus", flags->gpus, "GPUs (ranks) on this host; 0 = all visible")
      ->capture_default_str();
  cmd->add_option("-w,--warmup_iters", flags->warmup, "warm-up iterations per measurement")
      ->capture_default_str();
  cmd->add_option("-n,--iters", flags->iterations, "timed iterations per latency-curve sample")
      ->capture_default_str();
  cmd->add_option("--gemm-iters", flags->gemm_iterations,
                  "timed iterations per GEMM-profile part (alone, without reorder, full) and round")
      ->capture_default_str();
  cmd->add_option("--rounds", flags->rounds,
                  "rounds over which a shape's base plans are timed interleaved, one traced run "
                  "each per round")
      ->capture_default_str();
  cmd->add_option("--points-per-octave", flags->points_per_octave,
                  "latency-curve samples per doubling of the message size (1..16)")
      ->capture_default_str();
  cmd->add_option("--out", flags->out,
                  "profile file (default: <cache dir>/profiles/<device>-g<N>-<op>-<dtype>.json)");
  cmd->add_option("--cache", flags->cache, "plan cache to update ($KILN_PLAN_CACHE)")
      ->capture_default_str();
  cmd->add_flag("--no-cache", flags->no_cache, "do not touch the plan cache");
  cmd->add_flag("--no-sm-probe", flags->no_sm_probe, "skip measuring the SMs NCCL's kernels hold");
  cmd->add_flag("--no-gemm-search", flags->no_gemm_search,
                "profile the base plans' own GEMM configurations instead of the fastest of every "
                "built one per shape (searched on rank 0's GPU)");
  cmd->add_option("--timeout", flags->timeout, "seconds any wait may take before ranks abort")
      ->capture_default_str();
  cmd->callback([flags, &run]() {
    run = [flags](const Invocation& invocation) -> int {
      const tune::TuneProfileOptions o = to_options(*flags);  // flag errors before any launch
      const core::Provenance provenance = core::host_provenance(invocation.argc, invocation.argv);
      return launch_tune_ranks(flags->gpus, "kiln tune profile", [&](const comm::RankInfo& info) {
        return rank_main(info, *flags, o, provenance);
      });
    };
  });
}

}  // namespace kiln::app
