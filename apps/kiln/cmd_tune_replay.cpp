// `kiln tune replay`: a recorded `kiln tune validate` run re-predicted with this kiln's tuner
// model, offline (no GPU): the model's error against the GPU measurements of the record, per shape,
// and how far its predictions moved from the recorded ones.
#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "apps/kiln/commands.hpp"
#include "core/error.hpp"
#include "core/provenance.hpp"
#include "overlap/gemm_shape.hpp"
#include "tune/validation_replay.hpp"

namespace kiln::app {
namespace {

struct ReplayFlags {
  std::string validation_json, csv, json_path;
};

std::string read_file(const std::string& path, const std::string& flag) {
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("{} {}: cannot read the file", flag, path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int run_replay(const ReplayFlags& f) {
  nlohmann::json validation;
  try {
    validation = nlohmann::json::parse(read_file(f.validation_json, "--validation"));
  } catch (const nlohmann::json::parse_error& e) {
    throw UsageError(
        fmt::format("--validation {}: not valid JSON ({})", f.validation_json, e.what()));
  }
  const std::vector<tune::RecordedPoint> points =
      tune::parse_validation_csv(read_file(f.csv, "--csv"), f.csv);
  const tune::ReplayResult r = tune::replay_validation(validation, points, f.validation_json);
  fmt::print("{:>18} {:>7} {:>6} {:>11} {:>13}\n", "shape", "pairs", "fresh", "mean error",
             "mean |error|");
  nlohmann::json shapes = nlohmann::json::array();
  for (const tune::ReplayedShape& s : r.shapes) {
    fmt::print("{:>18} {:7d} {:>6} {:10.2f}% {:12.2f}%\n", overlap::shape_name(s.shape), s.points,
               s.fresh ? "yes" : "no", 100 * s.mean_error, 100 * s.mean_abs_error);
    shapes.push_back({{"shape", overlap::shape_name(s.shape)},
                      {"pairs", s.points},
                      {"fresh_gemm", s.fresh},
                      {"mean_error", s.mean_error},
                      {"mean_abs_error", s.mean_abs_error}});
  }
  fmt::print(
      "# {} (shape, partition) pairs replayed: mean |error| {:.2f}%, p90 {:.2f}%, max {:.2f}%; "
      "largest change from the recorded predictions {:.2f} us{}\n",
      points.size(), 100 * r.mean_abs_error, 100 * r.p90_abs_error, 100 * r.max_abs_error,
      r.max_change_us, r.max_change_us < 0.01 ? " (the model that ran the validation)" : "");
  if (!f.json_path.empty()) {
    core::write_json_file(f.json_path, {{"benchmark", "kiln tune replay"},
                                        {"validation", f.validation_json},
                                        {"csv", f.csv},
                                        {"pairs", points.size()},
                                        {"mean_abs_error", r.mean_abs_error},
                                        {"p90_abs_error", r.p90_abs_error},
                                        {"max_abs_error", r.max_abs_error},
                                        {"max_change_us", r.max_change_us},
                                        {"shapes", shapes}});
    fmt::print("# wrote {}\n", f.json_path);
  }
  return 0;
}

}  // namespace

void register_tune_replay(CLI::App& tune, Runner& run) {
  auto flags = std::make_shared<ReplayFlags>();
  CLI::App* cmd = tune.add_subcommand(
      "replay",
      "re-predict a recorded `kiln tune validate` run with this kiln's model (no GPU needed)");
  cmd->add_option("--validation", flags->validation_json,
                  "the validation's --json file (holds the profile it used)")
      ->required();
  cmd->add_option("--csv", flags->csv, "the validation's --csv file (every measured pair)")
      ->required();
  cmd->add_option("--json", flags->json_path, "write the replay's figures to this file");
  cmd->callback(
      [flags, &run]() { run = [flags](const Invocation&) -> int { return run_replay(*flags); }; });
}

}  // namespace kiln::app
