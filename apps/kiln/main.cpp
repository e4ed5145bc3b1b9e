// kiln: one CLI for the toolkit. Usage errors exit 2 with one line; runtime errors exit 1.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "apps/kiln/commands.hpp"
#include "core/error.hpp"
#include "core/provenance.hpp"
#include "core/startup_trace.hpp"

int main(int argc, char** argv) {
  kiln::core::trace_point("main");
  CLI::App app{"kiln: fast single- and multi-GPU kernels, measured against the hardware's limits"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "kiln (commit " + kiln::core::git_commit() + ")");
  kiln::app::Runner run;
  kiln::app::register_probe(app, run);
  kiln::app::register_profiles(app, run);
  CLI::App* bench = app.add_subcommand("bench", "benchmarks (see `kiln bench --help`)");
  bench->require_subcommand(1);
  kiln::app::register_bench_collective(*bench, run);
  kiln::app::register_bench_suite(*bench, run);
  kiln::app::register_bench_plot(*bench, run);
  kiln::app::register_bench_candidate(*bench, run);
  CLI::App* overlap =
      app.add_subcommand("overlap", "GEMM + collective overlap (see `kiln overlap --help`)");
  overlap->require_subcommand(1);
  kiln::app::register_overlap_bench(*overlap, run);
  kiln::app::register_overlap_gemm(*overlap, run);
  kiln::app::register_overlap_sum(*overlap, run);
  CLI::App* reduce = app.add_subcommand("reduce", "reduction kernels (see `kiln reduce --help`)");
  reduce->require_subcommand(1);
  kiln::app::register_reduce_bench(*reduce, run);
  CLI::App* tune = app.add_subcommand(
      "tune", "wave-group tuner: profiles, plans, validation (see `kiln tune --help`)");
  tune->require_subcommand(1);
  kiln::app::register_tune_profile(*tune, run);
  kiln::app::register_tune_plan(*tune, run);
  kiln::app::register_tune_validate(*tune, run);
  kiln::app::register_tune_replay(*tune, run);
  kiln::app::register_evolve(app, run);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "kiln: error: %s (see --help)\n", e.what());
    return 2;
  }
  try {
    kiln::core::trace_point("parsed");
    const int code = run ? run({argc, argv}) : 2;
    kiln::core::trace_point("returning");
    return code;
  } catch (const kiln::UsageError& e) {
    std::fprintf(stderr, "kiln: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln: error: %s\n", e.what());
    return 1;
  }
}
