// The subcommands of the kiln CLI. Each registers its flags on a CLI11 app and sets `run`, which
// main() calls after parsing; run returns the process exit code.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>

namespace kiln::app {

struct Invocation {
  int argc = 0;
  char** argv = nullptr;
};

using Runner = std::function<int(const Invocation&)>;

void register_probe(CLI::App& app, Runner& run);
void register_profiles(CLI::App& app, Runner& run);
void register_bench_collective(CLI::App& bench, Runner& run);
void register_bench_suite(CLI::App& bench, Runner& run);
void register_bench_plot(CLI::App& bench, Runner& run);
void register_bench_candidate(CLI::App& bench, Runner& run);
void register_overlap_bench(CLI::App& overlap, Runner& run);
void register_overlap_gemm(CLI::App& overlap, Runner& run);
void register_overlap_sum(CLI::App& overlap, Runner& run);
void register_reduce_bench(CLI::App& reduce, Runner& run);
void register_tune_profile(CLI::App& tune, Runner& run);
void register_tune_plan(CLI::App& tune, Runner& run);
void register_tune_validate(CLI::App& tune, Runner& run);
void register_tune_replay(CLI::App& tune, Runner& run);
void register_evolve(CLI::App& app, Runner& run);

}  // namespace kiln::app
