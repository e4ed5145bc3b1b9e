// The benchmark harness (see suite.hpp).
#include "bench/suite.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <chrono>
#include <memory>
#include <optional>
#include "bench/candidate_library.hpp"
#include "bench/guarded_call.hpp"
#include "bench/judge_guards.hpp"
#include "bench/problem.hpp"
#include "bench/screened_timing.hpp"
#include "bench/torch_baseline.hpp"
#include "comm/rank_timing.hpp"

#include "comm/peer_memory.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/hardware_profile.hpp"
#include "core/stream.hpp"
#include "core/table.hpp"
#include "core/test_values.hpp"
#include "core/wall_clock.hpp"
#include "roofline/metrics.hpp"

namespace kiln::bench {
namespace {

// Tries of the outside-work check before a candidate fails it (see its use).
constexpr int kOutsideWorkTries = 3;

roofline::Ceilings ceilings_for(const SuiteOptions& o, int device) {
  if (!o.profile.empty()) return roofline::ceilings_from_profile(core::find_profile(o.profile));
  cudaDeviceProp prop{};
  KILN_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  const auto profile = core::profile_for_device_name(prop.name);
  if (!profile) {
    throw UsageError(
        fmt::format("no hardware profile matches '{}'; name one with --profile", prop.name));
  }
  return roofline::ceilings_from_profile(*profile);
}

// True on every rank when `ok` holds on every rank.
bool all_ranks(comm::Communicator& comm, bool ok, cudaStream_t stream) {
  return max_over_ranks(comm, ok ? 0.0 : 1.0, stream) == 0.0;
}

// The ranks meet: nobody starts reading peers' inputs of the next trial before all are written,
// nor overwrites its inputs while a peer may still read them.
void meet(comm::Communicator& comm, cudaStream_t stream) {
  comm.wait(stream, "suite");
  (void)max_over_ranks(comm, 0.0, stream);
}

constexpr std::size_t kCandidateScratchBytes = 1 << 20;

int kiln_dtype(core::DType dtype) {
  switch (dtype) {
    case core::DType::kBf16:
      return KILN_BF16;
    case core::DType::kFp16:
      return KILN_FP16;
    case core::DType::kFp32:
      return KILN_FP32;
    case core::DType::kInt32:
      return KILN_INT32;
  }
  return -1;
}

}  // namespace

void apply_timing_preset(SuiteOptions& o, const std::string& preset) {
  if (preset == "pkb") {
    o.warmup = 500;
    o.iterations = 100;
  } else if (preset != "default") {
    throw UsageError("--preset " + preset +
                     ": accepted pkb (500 warm-up, 100 iterations), "
                     "default");
  }
}

std::vector<SuiteRow> run_suite(comm::Communicator& comm, const ProblemList& registry,
                                const SuiteOptions& o,
                                const std::function<void(const SuiteRow&)>& on_row) {
  KILN_REQUIRE(o.trials >= 1 && o.warmup >= 0 && o.iterations >= 1,
               "--trials and -n must be >= 1 and -w >= 0");
  const std::vector<const Problem*> problems = select_problems(registry, o.problems);
  // A size no selected problem has is a typo, not an empty suite.
  for (const std::string& wanted : o.sizes) {
    std::string known;
    bool found = false;
    for (const Problem* p : problems) {
      for (const ProblemSize& size : p->sizes()) {
        found = found || size.name == wanted;
        if (("," + known + ",").find("," + size.name + ",") == std::string::npos)
          known += (known.empty() ? "" : ",") + size.name;
      }
    }
    if (!found) {
      throw UsageError(fmt::format("--sizes {}: no selected problem has this size (they have: {})",
                                   wanted, known));
    }
  }
  const roofline::Ceilings ceilings = ceilings_for(o, comm.device());
  // A run cache brings its own stream: the runs it keeps were started on it.
  core::Stream own_stream;
  const cudaStream_t stream_handle = o.runs ? o.runs->stream.get() : own_stream.get();
  cudaDeviceProp prop{};
  KILN_CUDA_CHECK(cudaGetDeviceProperties(&prop, comm.device()));
  const double l2_bytes = static_cast<double>(prop.l2CacheSize);
  std::vector<SuiteRow> rows;
  const auto report = [&](const std::string& step) {
    if (o.progress) o.progress(step);
  };
  // An outside candidate: loaded in this rank, with zeroed peer scratch for its own flags.
  std::unique_ptr<CandidateLibrary> candidate;
  std::unique_ptr<comm::PeerMemory> scratch;
  unsigned long long candidate_calls = 0;
  if (!o.candidate_library.empty()) {
    candidate = std::make_unique<CandidateLibrary>(o.candidate_library);
    scratch = std::make_unique<comm::PeerMemory>(comm, kCandidateScratchBytes, "candidate scratch");
  }
  for (const Problem* problem : problems) {
    for (const ProblemSize& size : problem->sizes()) {
      if (!o.sizes.empty() && std::find(o.sizes.begin(), o.sizes.end(), size.name) == o.sizes.end())
        continue;
      // A problem that cannot run this size on this world (e.g. blocks that are not whole
      // 16-byte vectors on 3 ranks) says so on every rank alike: the row is skipped, not the suite.
      // KernelBench's problems are fp32 whatever -d says.
      const core::DType dtype = problem->fixed_dtype().value_or(o.dtype);
      report(problem->name() + " " + size.name + " setup");
      const auto setup_start = std::chrono::steady_clock::now();
      // A run kept from an earlier call (a batch of candidates) is set up and checked already.
      const std::string run_key =
          fmt::format("{}/{}/{}", problem->name(), size.name, core::dtype_name(dtype));
      ProblemRunCache::Entry* cached = nullptr;
      if (o.runs) {
        const auto it = o.runs->entries.find(run_key);
        if (it != o.runs->entries.end()) cached = &it->second;
      }
      std::unique_ptr<RankContext> own_context;
      std::unique_ptr<ProblemRun> own_run;
      ProblemRun* run = cached ? cached->run.get() : nullptr;
      if (!cached) {
        own_context = std::make_unique<RankContext>(RankContext{comm, stream_handle, dtype});
        try {
          own_run = problem->start(size, *own_context);
        } catch (const UsageError& e) {
          for (const std::string& solution : problem->solutions()) {
            SuiteRow row;
            row.problem = problem->name();
            row.category = category_name(problem->category());
            row.size = size.name;
            row.solution = solution;
            row.skipped = e.what();
            rows.push_back(row);
            on_row(row);
          }
          continue;
        }
        run = own_run.get();
      }
      const roofline::RooflineResult roof =
          roofline::evaluate(problem->cost(size, dtype, comm.size()), ceilings);
      const std::optional<roofline::CostModel> floor_model =
          problem->floor_cost(size, dtype, comm.size());
      std::string reference_check;
      bool reference_ok = true;
      if (cached) {
        reference_check = cached->reference_check;
        reference_ok = cached->reference_ok;
      } else {
        const std::string check_key = fmt::format("{}/{}", run_key, o.seed);
        const auto known = o.runs
                               ? o.runs->reference_checks.find(check_key)
                               : std::map<std::string, ProblemRunCache::ReferenceCheck>::iterator{};
        if (o.runs && known != o.runs->reference_checks.end()) {
          // Checked in this process already, before its set-up was freed.
          reference_check = known->second.check;
          reference_ok = known->second.ok;
        } else {
          // The reference's own check, on the first trial's inputs.
          report(problem->name() + " " + size.name + " reference check");
          run->make_inputs(o.seed);
          meet(comm, stream_handle);
          run->poison_outputs();
          run->reference();
          comm.wait(stream_handle, problem->name() + " reference");
          reference_check = run->check_reference();
          reference_ok = all_ranks(comm, reference_check.empty(), stream_handle);
          if (o.runs) o.runs->reference_checks[check_key] = {reference_check, reference_ok};
        }
        if (o.runs) {
          // One run kept at a time: a batch over several sizes would otherwise hold them all
          // (KernelBench's sizes take tens of GB each).
          o.runs->entries.clear();
          ProblemRunCache::Entry& entry = o.runs->entries[run_key];
          ++o.runs->setups;
          entry.context = std::move(own_context);
          entry.run = std::move(own_run);
          entry.reference_check = reference_check;
          entry.reference_ok = reference_ok;
        }
      }
      const double setup_seconds = core::seconds_since(setup_start);
      const auto solutions =
          candidate ? std::vector<std::string>{o.candidate_name} : problem->solutions();
      // A candidate's arguments are the same for every call but the call count: built once,
      // outside the timed loops.
      std::vector<std::string> dim_names;
      std::vector<long long> dims;
      for (const auto& [name, value] : size.dims) {
        dim_names.push_back(name);
        dims.push_back(value);
      }
      std::vector<const char*> dim_name_pointers;
      for (const std::string& n : dim_names) dim_name_pointers.push_back(n.c_str());
      const std::string problem_name = problem->name();
      CandidateBuffers buffers;
      std::vector<void*> peer_scratch;
      KilnCandidateArgs args{};
      if (candidate) {
        buffers = run->candidate_buffers();
        peer_scratch.assign(scratch->peers().begin(), scratch->peers().end());
        args.abi_version = KILN_CANDIDATE_ABI_VERSION;
        args.rank = comm.rank();
        args.world = comm.size();
        args.dtype = kiln_dtype(dtype);
        args.problem = problem_name.c_str();
        args.size = size.name.c_str();
        args.num_dims = static_cast<int>(dims.size());
        args.dim_names = dim_name_pointers.data();
        args.dims = dims.data();
        args.num_inputs = static_cast<int>(buffers.inputs.size());
        args.inputs = buffers.inputs.data();
        args.input_bytes = buffers.input_bytes.data();
        args.peer_inputs = buffers.peer_inputs.data();
        args.num_outputs = static_cast<int>(buffers.outputs.size());
        args.outputs = buffers.outputs.data();
        args.output_bytes = buffers.output_bytes.data();
        args.scratch = scratch->local();
        args.peer_scratch = peer_scratch.data();
        args.scratch_bytes = kCandidateScratchBytes;
        args.stream = stream_handle;
      }
      // Runs solution s, or the candidate; returns "" or why the call failed (never throws, so
      // the ranks stay in step through the collectives that follow).
      const auto solve = [&](int s) -> std::string {
        if (!candidate) {
          run->solution(s);
          return "";
        }
        args.call = ++candidate_calls;
        const int code = candidate->entry()(&args);
        return code == 0 ? "" : fmt::format("the candidate returned {}", code);
      };
      for (int s = 0; s < static_cast<int>(solutions.size()); ++s) {
        SuiteRow row;
        row.problem = problem->name();
        row.category = category_name(problem->category());
        row.size = size.name;
        row.solution = solutions[s];
        if (!candidate) row.solution_note = run->describe_solution(s);
        row.reference_check =
            reference_ok ? ""
                         : (reference_check.empty() ? "failed on another rank" : reference_check);
        row.phase_seconds["setup"] = setup_seconds;
        auto phase_start = std::chrono::steady_clock::now();
        // Host seconds since the last phase ended, under `phase`.
        const auto end_phase = [&](const char* phase) {
          row.phase_seconds[phase] += core::seconds_since(phase_start);
          phase_start = std::chrono::steady_clock::now();
        };
        const std::string what = fmt::format("{} {} {}", row.problem, row.size, row.solution);
        // Correctness: guarded calls (guarded_call.hpp) with fresh inputs per trial (the problem
        // mixes in the rank), each called twice to check that the output is deterministic.
        bool correct = true;
        GuardedCaller caller(
            comm, stream_handle, *run, [&] { return solve(s); }, what);
        // Screened judgements (kiln's own kernels during a search) take the reference's output
        // from the process's keep (bench/kept_references.hpp), made here for the trials' seeds
        // and the screened timing's before any candidate's call. Verdicts run the reference
        // every time.
        const std::uint64_t screen_seed = core::mix64(o.seed + 1000003);
        const auto trial_seed = [&](int trial) { return core::mix64(o.seed + 1 + trial); };
        const bool keeping = o.screen_timing && o.runs && KeptReferences::keepable(*run);
        if (keeping) {
          std::vector<std::uint64_t> seeds = {screen_seed};
          for (int trial = 0; trial < o.trials; ++trial) seeds.push_back(trial_seed(trial));
          o.runs->kept.keep(
              *run, run_key, seeds, stream_handle, [&] { meet(comm, stream_handle); },
              [&] { comm.wait(stream_handle, what + " keeping the reference"); });
        }
        const auto screened_reference = [&](std::uint64_t seed) {
          if (!keeping) {
            run->reference();
            return false;
          }
          return o.runs->kept.reference(*run, run_key, seed, stream_handle);
        };
        if (keeping) caller.set_reference(screened_reference);
        for (int trial = 0; trial < o.trials; ++trial) {
          report(fmt::format("{} trial {}", what, trial));
          const GuardedCaller::Outcome r = caller.call(trial_seed(trial), true);
          if (!r.failure.empty() && row.failure.empty())
            row.failure = fmt::format("trial {}: {}", trial, r.failure);
          correct = all_ranks(comm, r.failure.empty(), stream_handle) && correct;
        }
        // A kept copy that disagreed with the run's own reference (something wrote into it):
        // dropped, so the next judgement keeps a fresh one.
        if (caller.kept_copy_failed()) o.runs->kept.forget(run_key);
        end_phase("trials");
        // Timing. The reference (trusted) back to back on the last trial's inputs; the solution
        // by guarded calls, each on fresh inputs and checked (a solution that works only on some
        // calls, or only when calls are far apart, fails here).
        report(what + " reference timing");
        meet(comm, stream_handle);
        run->make_inputs(core::mix64(o.seed + o.trials));
        run->poison_outputs();
        const auto reference_samples =
            o.time_reference ? samples_over_ranks(
                                   comm, stream_handle, o.warmup, o.iterations,
                                   [&](int) { run->reference(); }, what + " reference timing")
                             : std::vector<float>{};
        end_phase("reference_timing");
        std::string timing_error;
        // Back to back, for kiln's own solutions only: a cheat that keeps results across calls on
        // the same inputs would read fast here, so outside candidates are never timed this way.
        if (!candidate && !o.screen_timing) {
          report(what + " back-to-back timing");
          const auto steady = samples_over_ranks(
              comm, stream_handle, o.warmup, o.iterations,
              [&](int i) {
                if (const std::string failed = solve(s); !failed.empty() && timing_error.empty())
                  timing_error = fmt::format("back-to-back call {}: {}", i, failed);
              },
              what + " back-to-back timing");
          row.solution_steady_us = core::summarize(std::span<const float>(steady));
          end_phase("back_to_back_timing");
        }
        std::vector<float> solution_samples;
        std::vector<float> judged_reference_samples;  // guarded timing: the reference timed alike
        if (o.screen_timing) {
          report(what + " screened timing");
          meet(comm, stream_handle);
          // The stream is shared by a batch's candidates: no access-policy window or persisting
          // carve-out an earlier one left applies to this one's calls.
          reset_l2_state(stream_handle);
          run->make_inputs(screen_seed);
          run->poison_outputs();
          // Phases of their own (the engine's per-phase seconds): at KernelBench's sizes making
          // the inputs and the closing check cost as much as the timed calls of a fast kernel.
          comm.wait(stream_handle, what + " screened inputs");
          end_phase("screen_inputs");
          double pace_seconds = 0.0;
          if (o.runs) {
            const auto pace = o.runs->screened_pace_seconds.find(run_key);
            if (pace != o.runs->screened_pace_seconds.end()) pace_seconds = pace->second;
          }
          solution_samples = screened_samples(
              comm, stream_handle, o.warmup, o.iterations, static_cast<std::size_t>(l2_bytes),
              [&] { return solve(s); }, timing_error, what + " screened timing", pace_seconds);
          end_phase("timed_calls");
          // One more call on poisoned outputs, against the reference on the same inputs: a kernel
          // that stopped writing after its first calls leaves poison, not the last calls' output.
          run->poison_outputs();
          if (const std::string failed = solve(s); !failed.empty() && timing_error.empty())
            timing_error = "screened calls: " + failed;
          const bool kept_copy = screened_reference(screen_seed);
          comm.wait(stream_handle, what + " reference");
          bool copy_was_wrong = false;
          const std::string mismatch = compare_deciding(
              *run, kept_copy, [&] { comm.wait(stream_handle, what + " reference"); },
              copy_was_wrong);
          if (copy_was_wrong) o.runs->kept.forget(run_key);
          if (!mismatch.empty() && timing_error.empty())
            timing_error = "screened calls: " + mismatch;
          end_phase("screen_check");
        } else {
          // Warm-up calls are plain calls on the last trial's inputs, each waited for (a wait
          // per call keeps every wait within the communicator's timeout): they are neither timed
          // nor judged, and a guarded call's checks cost ~30 ms (pkb's 500 warm-up calls made a
          // row take ~20 s, 2026-11-27). Every timed call is guarded.
          for (int i = 0; i < o.warmup; ++i) {
            if (i % 50 == 0) report(fmt::format("{} warm-up, call {}", what, i));
            if (const std::string failed = solve(s); !failed.empty() && timing_error.empty())
              timing_error = fmt::format("warm-up call {}: {}", i, failed);
            comm.wait(stream_handle, what + " warm-up");
          }
          meet(comm, stream_handle);
          for (int i = 0; i < o.iterations; ++i) {
            if (i % 10 == 0) report(fmt::format("{} timing, call {}", what, i));
            const std::uint64_t seed =
                core::mix64(o.seed + 1000003 + static_cast<std::uint64_t>(i));
            // The reference timed alike, on the same inputs, before and after the solution in
            // turn (neither always follows the other's warm-up).
            const auto time_reference = [&] {
              if (o.time_reference) judged_reference_samples.push_back(caller.time_reference(seed));
            };
            if (i % 2 == 0) time_reference();
            const GuardedCaller::Outcome r = caller.call(seed, false);
            if (i % 2 == 1) time_reference();
            if (!r.failure.empty() && timing_error.empty())
              timing_error = fmt::format("timed call {}: {}", i, r.failure);
            solution_samples.push_back(r.us);
          }
          max_over_ranks(comm, solution_samples, stream_handle);
          if (o.time_reference) max_over_ranks(comm, judged_reference_samples, stream_handle);
        }
        end_phase("timed_calls");
        bool outside_work = false;
        // Screened timing ranks kiln's own kernels for a search, whose reported kernels are judged
        // again with guarded timing and this check.
        if (candidate && !o.screen_timing) {
          // The same batch again, timed twice: by events on the given stream and on the host
          // with a device-wide synchronisation. Both spans include start-up skew between the
          // ranks and host launch gaps; only work left on other streams makes the host's longer.
          // A short batch (10 calls of a 10 us kernel) is within reach of one host hiccup, which
          // failed a correct kernel once (H100, 2026-11-25: 399 against 151 us): up to three
          // tries, and the check fails only if every try does. Work left on another stream is
          // there every time. The decision is all-reduced per try, so every rank tries alike.
          for (int attempt = 0; attempt < kOutsideWorkTries; ++attempt) {
            report(what + " outside-work check");
            meet(comm, stream_handle);
            KILN_CUDA_CHECK(cudaDeviceSynchronize());
            core::Event batch_start, batch_stop;
            const auto start = std::chrono::steady_clock::now();
            batch_start.record(stream_handle);
            for (int i = 0; i < o.iterations; ++i) (void)solve(s);
            batch_stop.record(stream_handle);
            KILN_CUDA_CHECK(cudaDeviceSynchronize());
            const double wall_us =
                std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                    .count();
            const double stream_us = batch_stop.elapsed_ms_since(batch_start) * 1e3;
            row.wall_us = max_over_ranks(comm, wall_us / o.iterations, stream_handle);
            row.stream_us = max_over_ranks(comm, stream_us / o.iterations, stream_handle);
            // On any rank, the host's span exceeds the stream's by more than a quarter plus the
            // synchronisation's own cost (a few us per batch; 50 us allowed).
            outside_work =
                max_over_ranks(comm, wall_us - 1.25 * stream_us - 50.0, stream_handle) > 0;
            if (!outside_work) break;
          }
          end_phase("outside_work");
        }
        if (o.time_reference) {
          // The speedup compares calls timed alike: judged against judged, screened (back to
          // back) against back to back.
          row.reference_steady_us = core::summarize(std::span<const float>(reference_samples));
          row.reference_us =
              judged_reference_samples.empty()
                  ? row.reference_steady_us
                  : core::summarize(std::span<const float>(judged_reference_samples));
        }
        row.solution_us = core::summarize(std::span<const float>(solution_samples));
        if (!timing_error.empty() && row.failure.empty()) row.failure = timing_error;
        correct = all_ranks(comm, timing_error.empty(), stream_handle) && correct;
        row.correct = correct && reference_ok;
        if (outside_work) {
          if (row.failure.empty()) {
            row.failure = fmt::format(
                "work outside the given stream: {:.1f} us per call with a device-wide sync, "
                "{:.1f} us by the stream's events over the same calls",
                row.wall_us, row.stream_us);
          }
          row.correct = false;
        }
        row.speedup = o.time_reference ? row.reference_us.median / row.solution_us.median : 0.0;
        row.roof_us = roof.seconds * 1e6;
        row.utilization = roofline::utilization(roof.seconds, row.solution_us.median * 1e-6);
        row.binding = roofline::resource_name(roof.binding);
        if (const auto t = o.torch_us.find(torch_baseline_key(row.problem, row.size));
            t != o.torch_us.end()) {
          row.torch_us = t->second;
        }
        if (floor_model) {
          row.floor_us = floor_seconds(*floor_model, ceilings, l2_bytes) * 1e6 * o.floor_scale;
          if (row.solution_us.median < row.floor_us) {
            row.correct = false;
            if (row.failure.empty()) {
              row.failure = fmt::format(
                  "faster than the hardware allows: median {:.2f} us is below the floor {:.2f} us "
                  "(the result's provable bytes and FLOPs at the highest rates any "
                  "implementation could use)",
                  row.solution_us.median, row.floor_us);
            }
          }
        }
        if (o.screen_timing && o.runs && row.correct) {
          // After every check (a row below the floor must not set the pace). The same on every
          // rank (medians of samples maxed over the ranks, an all-reduced verdict), so every rank
          // races the next candidate alike.
          double& pace = o.runs->screened_pace_seconds.try_emplace(run_key, 0.0).first->second;
          const double median_seconds = row.solution_us.median * 1e-6;
          if (pace == 0.0 || median_seconds < pace) pace = median_seconds;
        }
        rows.push_back(row);
        on_row(row);
      }
    }
  }
  return rows;
}

namespace {

const core::Table& suite_table() {
  static const core::Table table({{"problem", 22, true},
                                  {"category", 13, true},
                                  {"size", 7},
                                  {"solution", 17, true},
                                  {"ok", 4},
                                  {"ref us", 11},
                                  {"sol us", 11},
                                  {"speedup", 8},
                                  {"roof us", 9},
                                  {"U", 6},
                                  {"binding", 12, true},
                                  {"note"}});
  return table;
}

}  // namespace

std::string format_suite_header() {
  return suite_table().header();
}

std::string format_suite_row(const SuiteRow& r) {
  if (!r.skipped.empty()) {
    return suite_table().row(
        {r.problem, r.category.substr(0, 13), r.size, r.solution, "-", "skipped: " + r.skipped});
  }
  std::string note = r.failure;
  if (!r.reference_check.empty()) note = "REFERENCE CHECK FAILED: " + r.reference_check;
  if (note.empty() && r.torch_us > 0) {
    note = fmt::format("torch {:.2f} us, x{:.3f}", r.torch_us, r.torch_us / r.solution_us.median);
  }
  if (note.empty()) note = r.solution_note.substr(0, r.solution_note.find(" | "));  // JSON: all
  return suite_table().row({r.problem, r.category.substr(0, 13), r.size, r.solution,
                            r.correct ? "yes" : "NO", fmt::format("{:.2f}", r.reference_us.median),
                            fmt::format("{:.2f}", r.solution_us.median),
                            fmt::format("{:.3f}", r.speedup), fmt::format("{:.2f}", r.roof_us),
                            fmt::format("{:.3f}", r.utilization), r.binding, note});
}

nlohmann::json suite_row_to_json(const SuiteRow& r) {
  return {
      {"problem", r.problem},
      {"category", r.category},
      {"size", r.size},
      {"solution", r.solution},
      {"solution_note", r.solution_note},
      {"reference_check", r.reference_check.empty() ? "passed" : r.reference_check},
      {"correct", r.correct},
      {"failure", r.failure},
      {"reference_us", core::to_json(r.reference_us)},
      {"reference_steady_us", core::to_json(r.reference_steady_us)},
      {"solution_us", core::to_json(r.solution_us)},
      {"speedup", r.speedup},
      // As before 96291ef: the back-to-back reference's median over the solution's.
      {"speedup_steady", r.reference_steady_us.median > 0 && r.solution_us.median > 0
                             ? r.reference_steady_us.median / r.solution_us.median
                             : 0.0},
      {"solution_steady_us", core::to_json(r.solution_steady_us)},
      // Both back to back, as records before 98bc8e5 define the speedup (0: not timed so).
      {"speedup_back_to_back", r.reference_steady_us.median > 0 && r.solution_steady_us.median > 0
                                   ? r.reference_steady_us.median / r.solution_steady_us.median
                                   : 0.0},
      {"roof_us", r.roof_us},
      {"utilization", r.utilization},
      {"binding", r.binding},
      {"skipped", r.skipped},
      {"floor_us", r.floor_us},
      {"torch_us", r.torch_us},
      {"speedup_vs_torch",
       r.torch_us > 0 && r.solution_us.median > 0 ? r.torch_us / r.solution_us.median : 0.0},
      {"wall_us", r.wall_us},
      {"stream_us", r.stream_us},
      {"phase_seconds", r.phase_seconds}};
}

nlohmann::json suite_metrics(const std::vector<SuiteRow>& rows) {
  nlohmann::json j;
  std::vector<roofline::ProblemOutcome> outcomes;
  for (const SuiteRow& r : rows) {
    if (!r.skipped.empty()) continue;
    outcomes.push_back({r.problem + " " + r.size + " " + r.solution, r.correct,
                        r.solution_us.median * 1e-6, r.reference_us.median * 1e-6,
                        r.roof_us * 1e-6});
  }
  j["measured_rows"] = outcomes.size();
  if (outcomes.empty()) return j;  // every row skipped: no metric is defined
  for (double p : {0.0, 1.0, 1.5, 2.0})
    j[fmt::format("fast_{}", p)] = roofline::fast_p(outcomes, p);
  for (double u : {0.25, 0.5, 0.75}) j[fmt::format("roof_{}", u)] = roofline::roof_u(outcomes, u);
  return j;
}

nlohmann::json suite_json(const SuiteOptions& o, const nlohmann::json& metrics,
                          const std::vector<SuiteRow>& rows) {
  nlohmann::json result;
  result["dtype"] = core::dtype_name(o.dtype);
  result["trials"] = o.trials;
  result["warmup"] = o.warmup;
  result["iterations"] = o.iterations;
  result["metrics"] = metrics;
  result["rows"] = nlohmann::json::array();
  for (const auto& r : rows) result["rows"].push_back(suite_row_to_json(r));
  return result;
}

}  // namespace kiln::bench
