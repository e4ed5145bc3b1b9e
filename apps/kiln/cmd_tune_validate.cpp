// `kiln tune validate`: predicted vs measured latency over many (shape, partition) pairs and the
// predictive choice vs the measured optimum per shape (CSV, CDF plot, JSON).
// `kiln tune compare`: the tuned plan against the equal-size and one-wave-per-group strategies and
// reference (hand-picked) plans, full operation, interleaved.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <fstream>

#include "apps/kiln/commands.hpp"
#include "apps/kiln/tune_common.hpp"
#include "bench/result_envelope.hpp"
#include "comm/rank_provenance.hpp"
#include "core/hardware_profile.hpp"
#include "core/progress_bar.hpp"
#include "overlap/gemm_shape.hpp"
#include "tune/error_cdf_plot.hpp"
#include "tune/plan_lookup.hpp"
#include "tune/tune_validate.hpp"
#include "tune/validation_report.hpp"

namespace kiln::app {
namespace {

struct ValidateFlags {
  std::string op = "rs";
  std::string dtype = "bf16";
  std::string layout = "nk";
  std::vector<std::string> shapes;
  std::string profile;
  int gpus = 0;
  int max_measured = 100;
  int max_first = 2, max_last = 4;
  int warmup = 2, iterations = 10;
  int final_iterations = 60, final_rounds = 6, final_candidates = 4;
  std::string reference_json;
  bool no_aa_control = false;
  std::string csv_path, svg_path, json_path;
  double timeout = 60.0;
};

tune::TuneValidateOptions to_options(const ValidateFlags& f, bool compare) {
  tune::TuneValidateOptions o;
  o.op = overlap::parse_overlap_op(f.op, "--op");
  o.dtype = core::parse_dtype(f.dtype, "-d");
  KILN_REQUIRE(o.dtype == core::DType::kBf16 || o.dtype == core::DType::kFp16,
               "-d " + f.dtype + ": accepted bf16, fp16");
  o.layout = overlap::parse_weight_layout(f.layout, "--layout");
  for (const std::string& s : f.shapes) o.shapes.push_back(overlap::parse_shape(s, "--shape"));
  if (o.shapes.empty()) {
    o.shapes = compare ? overlap::default_overlap_shapes() : tune::default_validation_shapes();
  }
  KILN_REQUIRE(f.max_measured >= 2 && f.max_measured <= 10000,
               fmt::format("--max-measured {}: accepted range 2..10000", f.max_measured));
  KILN_REQUIRE(
      f.max_first >= 1 && f.max_last >= 1,
      fmt::format("--max-first {} / --max-last {}: must be >= 1", f.max_first, f.max_last));
  KILN_REQUIRE(f.warmup >= 0 && f.iterations >= 1 && f.final_rounds >= 1 &&
                   f.final_iterations >= f.final_rounds,
               "-w >= 0, -n >= 1, --final-rounds >= 1 and --final-iters >= --final-rounds");
  o.max_measured = f.max_measured;
  o.limits = {f.max_first, f.max_last};
  o.warmup = f.warmup;
  o.iterations = f.iterations;
  o.final_iterations = f.final_iterations;
  o.final_rounds = f.final_rounds;
  KILN_REQUIRE(f.final_candidates >= 1 && f.final_candidates <= 64,
               fmt::format("--final-candidates {}: accepted range 1..64", f.final_candidates));
  o.final_candidates = f.final_candidates;
  o.aa_control = !f.no_aa_control;
  return o;
}

// The profile: the given file, else the saved/built-in one for this machine, else measured now.
tune::TunerProfile profile_for(comm::Communicator& comm, const ValidateFlags& f,
                               const tune::TuneValidateOptions& o) {
  cudaDeviceProp prop{};
  KILN_CUDA_CHECK(cudaGetDeviceProperties(&prop, comm.device()));
  const auto hw = core::profile_for_device_name(prop.name);
  const tune::PlanKey key{hw ? hw->key : std::string(prop.name),
                          comm.size(),
                          overlap::overlap_op_name(o.op),
                          core::dtype_name(o.dtype),
                          {}};
  tune::ProfileSearch search;
  search.explicit_path = f.profile;
  std::string where;
  if (auto found = tune::find_tuner_profile(key, search, &where)) {
    if (comm.rank() == 0) fmt::print("# profile: {}\n", where);
    return *found;
  }
  if (comm.rank() == 0) fmt::print("# profile: none saved for this setting; measuring one now\n");
  tune::TuneProfileOptions po;
  po.op = o.op;
  po.dtype = o.dtype;
  po.layout = o.layout;
  po.shapes = o.shapes;
  po.base_plans = tune::default_base_plans();
  return tune::measure_tuner_profile(comm, po, nullptr);
}

std::string shape_text(const overlap::GemmShape& s) {
  return overlap::shape_name(s);
}

int validate_main(const comm::RankInfo& info, const ValidateFlags& f,
                  const tune::TuneValidateOptions& o, core::Provenance provenance) {
  comm::Communicator comm(info, f.timeout);
  const bool printer = comm.rank() == 0;
  const tune::TunerProfile profile = profile_for(comm, f, o);
  double units = 0;
  for (const auto& s : o.shapes) {
    // The plan run_tune_validation measures: with the serial plan in the running, the tuner's
    // choice can be a base the profile never measured (4xH200, 2026-11-27: every rank stopped
    // here with "profile has no GEMM measurement with base plan ... comm=nccl").
    const int waves =
        tune::wave_profile_for(profile, s, tune::validation_plan(profile, s, o.limits)).waves();
    units += static_cast<double>(
        std::min<std::uint64_t>(tune::candidate_count(waves, o.limits), o.max_measured));
  }
  if (printer) {
    fmt::print(
        "# kiln tune validate: GEMM + {} {}, {} rank(s), {} shape(s), ~{:.0f} plans to "
        "measure (~{})\n",
        f.op, f.dtype, comm.size(), o.shapes.size(), units, core::format_duration(0.08 * units));
    std::fflush(stdout);
  }
  core::ProgressBar bar("validate", units, printer);
  std::vector<tune::ValidationPoint> points;
  const std::vector<tune::ShapeValidation> shapes = tune::run_tune_validation(
      comm, profile, o, points, [&](double u, const std::string& s) { bar.advance(u, s); });
  bar.finish();
  if (!printer) return 0;

  const tune::ValidationSummary summary = tune::summarize_validation(points, shapes);
  fmt::print("{}{}", tune::validation_table(shapes),
             tune::validation_summary_line(summary, points.size(), shapes.size()));
  if (!f.csv_path.empty()) write_text_file(f.csv_path, tune::validation_csv(points));
  if (!f.svg_path.empty()) {
    write_text_file(
        f.svg_path,
        tune::error_cdf_svg(
            {{"all measured partitions", summary.errors},
             {"predictive choices", summary.chosen_errors},
             {"all, saved profile's GEMM times", summary.saved_errors}},
            fmt::format("kiln tune validate: |predicted - measured| / measured, GEMM + {} {}, {} "
                        "rank(s)",
                        f.op, f.dtype, comm.size()),
            3.0));
  }
  if (!f.json_path.empty()) {
    comm::add_rank_provenance(provenance, comm);
    nlohmann::json j = tune::validation_json(summary, shapes);
    j["op"] = f.op;
    j["profile"] = profile.to_json();
    bench::write_result(f.json_path, provenance, "tune-validate", j);
  }
  return 0;
}

// Reference plans per shape from a `kiln overlap bench --json` file ("" where it has none).
std::vector<std::string> reference_plans(const std::string& path,
                                         const std::vector<overlap::GemmShape>& shapes) {
  std::vector<std::string> plans(shapes.size());
  if (path.empty()) return plans;
  const nlohmann::json j = read_json_file(path, "--reference-json");
  if (!j.contains("rows") || !j["rows"].is_array()) {
    throw UsageError("--reference-json " + path + ": not a `kiln overlap bench --json` file");
  }
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    for (const auto& row : j["rows"]) {
      if (row.value("shape", std::string()) == shape_text(shapes[i])) {
        plans[i] = row.value("plan", std::string());
      }
    }
  }
  return plans;
}

int compare_main(const comm::RankInfo& info, const ValidateFlags& f,
                 const tune::TuneValidateOptions& o, const std::vector<std::string>& reference,
                 core::Provenance provenance) {
  comm::Communicator comm(info, f.timeout);
  const bool printer = comm.rank() == 0;
  const tune::TunerProfile profile = profile_for(comm, f, o);
  core::ProgressBar bar("compare", static_cast<double>(o.shapes.size()), printer);
  const std::vector<tune::CompareRow> rows = tune::run_tune_compare(
      comm, profile, o, reference, [&](double u, const std::string& s) { bar.advance(u, s); });
  bar.finish();
  if (!printer) return 0;
  fmt::print(
      "# full operation (reorder included), us: median of the max over ranks, {} "
      "iterations interleaved over {} rounds; predicted in brackets\n",
      o.final_iterations, o.final_rounds);
  std::map<std::string, std::vector<double>> ratio;  // strategy time / tuned time
  nlohmann::json out = nlohmann::json::array();
  for (const auto& row : rows) {
    std::string line = fmt::format("{:>18}", shape_text(row.shape));
    nlohmann::json jr = {{"shape", shape_text(row.shape)}, {"plans", nlohmann::json::array()}};
    for (std::size_t i = 0; i < row.names.size(); ++i) {
      line +=
          fmt::format("  {} {:.1f} ({})", row.names[i], row.measured[i].median,
                      row.predicted_us[i] >= 0 ? fmt::format("{:.1f}", row.predicted_us[i]) : "-");
      if (i > 0) ratio[row.names[i]].push_back(row.measured[i].median / row.measured[0].median);
      jr["plans"].push_back({{"name", row.names[i]},
                             {"plan", row.plans[i]},
                             {"predicted_us", row.predicted_us[i]},
                             {"median_us", row.measured[i].median},
                             {"min_us", row.measured[i].min},
                             {"max_us", row.measured[i].max},
                             {"cv", row.measured[i].cv}});
    }
    fmt::print("{}\n", line);
    for (std::size_t i = 0; i < row.names.size(); ++i)
      fmt::print("#   {:>11}: {}\n", row.names[i], row.plans[i]);
    jr["timed_variants"] = row.timed_variants;
    out.push_back(jr);
  }
  for (const auto& [name, r] : ratio) {
    double log_sum = 0;
    for (double x : r) log_sum += std::log(x);
    fmt::print("# {} / tuned: geo-mean {:.4f} over {} shape(s) (> 1: tuned is faster)\n", name,
               std::exp(log_sum / r.size()), r.size());
  }
  if (o.aa_control) {
    fmt::print(
        "# tuned-again: the tuned plan on a second object, timed as its own variant (A/A "
        "control: its ratio is the measurement's bias between variants); strategies that chose "
        "the tuned plan share its measurement\n");
  }
  if (!f.json_path.empty()) {
    comm::add_rank_provenance(provenance, comm);
    bench::write_result(f.json_path, provenance, "tune-compare",
                        {{"op", f.op}, {"reference_json", f.reference_json}, {"rows", out}});
  }
  return 0;
}

void add_common(CLI::App* cmd, ValidateFlags& f) {
  cmd->add_option("--op", f.op, "rs (ReduceScatter) | ar (AllReduce)")->capture_default_str();
  cmd->add_option("-d,--datatype", f.dtype, "bf16|fp16")->capture_default_str();
  cmd->add_option("--layout", f.layout, "nk | kn (how B is stored)")->capture_default_str();
  cmd->add_option("--profile", f.profile,
                  "tuner profile (default: the saved or built-in one for this setting, else "
                  "measured first)");
  cmd->add_option("-g,--ngpus", f.gpus, "GPUs (ranks) on this host; 0 = all visible")
      ->capture_default_str();
  cmd->add_option("--max-first", f.max_first, "most waves in the first group (S1)")
      ->capture_default_str();
  cmd->add_option("--max-last", f.max_last, "most waves in the last group (S_P)")
      ->capture_default_str();
  cmd->add_option("-w,--warmup_iters", f.warmup, "warm-up iterations per plan")
      ->capture_default_str();
  cmd->add_option("--final-iters", f.final_iterations, "iterations of the interleaved re-timing")
      ->capture_default_str();
  cmd->add_option("--final-rounds", f.final_rounds, "rounds of the interleaved re-timing")
      ->capture_default_str();
  cmd->add_option("--final-candidates", f.final_candidates,
                  "validate: fastest measured partitions re-timed beside the predictive choice "
                  "to decide the optimum")
      ->capture_default_str();
  cmd->add_option("--json", f.json_path, "write results with provenance to this file");
  cmd->add_option("--timeout", f.timeout, "seconds any wait may take before ranks abort")
      ->capture_default_str();
}

}  // namespace

void register_tune_validate(CLI::App& tune, Runner& run) {
  auto flags = std::make_shared<ValidateFlags>();
  CLI::App* cmd = tune.add_subcommand(
      "validate", "predicted vs measured latency over (shape, partition) pairs; CSV + CDF plot");
  add_common(cmd, *flags);
  cmd->add_option("--shape", flags->shapes,
                  "per-GPU GEMM MxNxK, repeatable (default: twelve shapes of 4-12 waves)");
  cmd->add_option("--max-measured", flags->max_measured,
                  "partitions measured per shape; all when there are no more than this")
      ->capture_default_str();
  cmd->add_option("-n,--iters", flags->iterations, "timed iterations per partition and round")
      ->capture_default_str();
  cmd->add_option("--csv", flags->csv_path, "write every (shape, partition) point to this CSV");
  cmd->add_option("--svg", flags->svg_path, "write the CDF of |error| to this SVG");
  cmd->callback([flags, &run]() {
    run = [flags](const Invocation& invocation) -> int {
      const tune::TuneValidateOptions o = to_options(*flags, false);
      const core::Provenance provenance = core::host_provenance(invocation.argc, invocation.argv);
      return launch_tune_ranks(flags->gpus, "kiln tune validate", [&](const comm::RankInfo& info) {
        return validate_main(info, *flags, o, provenance);
      });
    };
  });

  auto cflags = std::make_shared<ValidateFlags>();
  CLI::App* compare = tune.add_subcommand(
      "compare", "tuned plans vs equal-size and one-wave-per-group groups and reference plans");
  add_common(compare, *cflags);
  compare->add_option("--shape", cflags->shapes,
                      "per-GPU GEMM MxNxK, repeatable (default: the overlap issue's six shapes)");
  compare->add_option("--reference-json", cflags->reference_json,
                      "`kiln overlap bench --json` file whose plans to compare against");
  compare->add_flag("--no-aa-control", cflags->no_aa_control,
                    "do not time the tuned plan a second time as its own variant");
  compare->callback([cflags, &run]() {
    run = [cflags](const Invocation& invocation) -> int {
      const tune::TuneValidateOptions o = to_options(*cflags, true);
      const std::vector<std::string> reference = reference_plans(cflags->reference_json, o.shapes);
      const core::Provenance provenance = core::host_provenance(invocation.argc, invocation.argv);
      return launch_tune_ranks(cflags->gpus, "kiln tune compare", [&](const comm::RankInfo& info) {
        return compare_main(info, *cflags, o, reference, provenance);
      });
    };
  });
}

}  // namespace kiln::app
