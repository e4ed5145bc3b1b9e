// See export.hpp.
#include "evolve/export.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "bench/candidate_library.hpp"
#include "core/error.hpp"
#include "evolve/candidate_evaluator.hpp"
#include "evolve/search.hpp"

namespace kiln::evolve {
namespace {

nlohmann::json read_json(const std::filesystem::path& path, const std::string& run) {
  std::ifstream file(path);
  if (!file)
    throw UsageError(
        fmt::format("{}: no {} (not a kiln evolve run folder)", run, path.filename().string()));
  try {
    return nlohmann::json::parse(file);
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(
        fmt::format("{}: {} is not JSON ({})", run, path.filename().string(), e.what()));
  }
}

}  // namespace

std::vector<ExportedKernel> export_runs(const std::vector<std::string>& runs,
                                        const std::string& out,
                                        const std::string& candidate_header) {
  if (runs.empty()) throw UsageError("kiln evolve export: name at least one run folder");
  if (!std::filesystem::exists(candidate_header))
    throw Error(fmt::format("the candidate header {} is missing", candidate_header));
  // Every folder is read and checked before anything is written: a bad one leaves no partial
  // export.
  struct Chosen {
    std::string run, problem, size, device, origin;
    std::size_t evaluations = 0;
    Genome genome;
    Evaluation evaluation;
  };
  std::vector<Chosen> chosen;
  std::set<std::string> names;
  for (const std::string& run : runs) {
    const std::filesystem::path dir(run);
    const nlohmann::json identity = read_json(dir / "run.json", run);
    const nlohmann::json log = read_json(dir / "log.json", run);
    const std::string problem = identity.value("problem", std::string());
    const std::string size = identity.value("size", std::string());
    if (problem.empty() || size.empty())
      throw UsageError(fmt::format("{}: run.json names no problem and size", run));
    // The best accepted evaluation (ties: the earliest).
    const nlohmann::json* best = nullptr;
    double best_fitness = 0.0;
    for (const nlohmann::json& entry : log) {
      const Evaluation e = Evaluation::from_json(entry.at("evaluation"), run + "/log.json");
      if (e.fitness() > best_fitness) {
        best_fitness = e.fitness();
        best = &entry;
      }
    }
    // A finished run's result is its report's best (with --timing screen, the best kernel the
    // guarded judge confirmed, which need not be the log's best screened figure).
    nlohmann::json reported;
    if (std::filesystem::exists(dir / "report.json")) {
      const nlohmann::json report = read_json(dir / "report.json", run);
      // Not when a resumed pass at a larger budget was cut after it (its log is longer).
      if (report.contains("best") && report.value("evaluations", std::size_t{0}) >= log.size()) {
        const Evaluation e = Evaluation::from_json(report["best"].at("evaluation"), run);
        if (e.fitness() <= 0)
          throw UsageError(fmt::format("{}: its reported best was rejected by the judge ({})", run,
                                       e.failure.substr(0, 200)));
        reported = report["best"];
        best = &reported;
      }
    }
    if (best == nullptr)
      throw UsageError(
          fmt::format("{}: no kernel of its {} evaluations was accepted", run, log.size()));
    const std::string name = problem + "-" + size;
    if (!names.insert(name).second)
      throw UsageError(fmt::format("{}: a second run of {} at size {}", run, problem, size));
    chosen.push_back({run, problem, size, identity.value("device", std::string("?")),
                      best->value("origin", std::string()), log.size(),
                      Genome::from_json(best->at("genome"), run + "/log.json"),
                      Evaluation::from_json(best->at("evaluation"), run)});
  }
  std::filesystem::create_directories(std::filesystem::path(out) / "kiln");
  std::filesystem::copy_file(candidate_header, std::filesystem::path(out) / "kiln" / "candidate.h",
                             std::filesystem::copy_options::overwrite_existing);
  // Its sibling with the launch macros of generated sources (whole-file nvcc: plain <<<>>>).
  const std::filesystem::path split_header =
      std::filesystem::path(candidate_header).parent_path() / "candidate_split.h";
  if (!std::filesystem::exists(split_header))
    throw Error(fmt::format("the candidate header {} is missing", split_header.string()));
  std::filesystem::copy_file(split_header,
                             std::filesystem::path(out) / "kiln" / "candidate_split.h",
                             std::filesystem::copy_options::overwrite_existing);
  std::vector<ExportedKernel> exported;
  for (const Chosen& c : chosen) {
    const std::string& run = c.run;
    const std::string& problem = c.problem;
    const std::string& size = c.size;
    const Genome& genome = c.genome;
    const Evaluation& evaluation = c.evaluation;
    const std::string name = problem + "-" + size;
    ExportedKernel k{c.run,
                     problem,
                     size,
                     (std::filesystem::path(out) / (name + ".cu")).string(),
                     (std::filesystem::path(out) / (name + ".json")).string(),
                     evaluation.fitness(),
                     evaluation.us,
                     evaluation.roof_us,
                     evaluation.binding};
    const std::string source = generate_candidate(genome, problem);
    // The matmul and attention kernels instantiate CUTLASS: the build line names its headers.
    const bool cutlass = bench::includes_cutlass(source);
    // The judge's own flags (-fno-gnu-unique: kernels loaded side by side keep their own
    // template statics; bench/candidate_library.cpp).
    const std::string build = fmt::format(
        "nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC "
        "-Xcompiler -fno-gnu-unique "
        "-I.{} {}.cu",
        cutlass ? " -I<CUTLASS 4.x>/include" : "", name);
    std::ofstream(k.source_path) << fmt::format(
                                        "// Exported by `kiln evolve export` from {}: {} at size "
                                        "{} on {}.\n// Judged: {:.1f} us, T_roof {:.1f} us, U "
                                        "{:.3f} ({}-bound). Build: {}\n",
                                        run, problem, size, c.device, evaluation.us,
                                        evaluation.roof_us, evaluation.fitness(),
                                        evaluation.binding, build)
                                 << source;
    nlohmann::json strategies = nlohmann::json::array();
    for (const std::string& s : genome.strategies) {
      const Strategy& strategy = find_strategy(s);
      nlohmann::json knobs = nlohmann::json::object();
      for (const Knob& knob : strategy.knobs) knobs[knob.name] = genome.knob(s, knob.name);
      strategies.push_back({{"name", s},
                            {"group", strategy.group},
                            {"addresses", resource_name(strategy.addresses)},
                            {"description", strategy.description},
                            {"knobs", knobs}});
    }
    const nlohmann::json record = {
        {"problem", problem},
        {"size", size},
        {"device", c.device},
        {"run", run},
        {"evaluations_in_run", c.evaluations},
        {"origin", c.origin},
        {"genome", genome.to_json()},
        {"describe", genome.describe()},
        {"strategies", strategies},
        {"evaluation", evaluation.to_json()},
        {"source", std::filesystem::path(k.source_path).filename().string()},
        {"build", build},
        {"needs_cutlass", cutlass}};
    std::ofstream(k.json_path) << record.dump(1) << "\n";
    exported.push_back(k);
  }
  return exported;
}

}  // namespace kiln::evolve
