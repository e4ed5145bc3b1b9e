// The reference's outputs kept per run and input seed, for screened judgements (kiln's own kernels
// during a search): every candidate is screened on the same seeds, the inputs of a seed are the
// same every time (the host rebuilds them from it), and so is a trusted reference's output, so a
// judge copies the kept output back instead of running a slow reference again (a KernelBench
// matmul's double-accumulating reference GEMM was ~90 of each ~145 ms judgement on an H200,
// 2026-11-29). Copies are made from freshly made inputs before any candidate's call, never from a
// reference that ran after one (a candidate may have changed its inputs), and a mismatch against
// a copy is decided by the run's own reference (compare_deciding). Verdicts never use them.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bench/problem.hpp"
#include "core/device_buffer.hpp"

namespace kiln::bench {

// The most a seed's copies may take (larger outputs are not kept: a map's reference costs what
// the copy would, and eight judge servers share one GPU).
inline constexpr unsigned long long kKeptReferenceBytes = 512ull << 20;

class KeptReferences {
 public:
  // Whether `run`'s reference outputs are declared (ProblemRun::reference_outputs) and small
  // enough to keep.
  static bool keepable(ProblemRun& run);
  // For each of `seeds` not yet kept under `run_key`: `before_inputs()` (the ranks meet), the
  // inputs made, the reference run and its outputs copied, then `wait()` for the stream.
  void keep(ProblemRun& run, const std::string& run_key, const std::vector<std::uint64_t>& seeds,
            cudaStream_t stream, const std::function<void()>& before_inputs,
            const std::function<void()>& wait);
  // Puts the output kept for `seed` where compare() reads it, on `stream` (true), or runs the
  // reference when none fits (false).
  bool reference(ProblemRun& run, const std::string& run_key, std::uint64_t seed,
                 cudaStream_t stream);
  void forget(const std::string& run_key);  // every seed of the run
  void clear();
  std::size_t count() const { return copies_.size(); }
  std::size_t bytes() const { return bytes_; }  // a judge's leak check leaves these out
  // Every kept buffer (for inspection: the GPU test overwrites them).
  std::vector<core::DeviceBuffer*> buffers();

 private:
  static std::string key(const std::string& run_key, std::uint64_t seed);
  std::map<std::string, std::vector<core::DeviceBuffer>> copies_;
  std::size_t bytes_ = 0;
};

// run.compare(), after the reference output was put in place; when that was a kept copy
// (`kept_copy`) and it disagrees, the run's own reference decides: it runs, `wait()`, and
// compare() again; `copy_was_wrong` is set when the solution then passes (something overwrote the
// copy, which must not fail every later candidate). Only ever a one-rank path: problems that keep
// references are one-rank, so no collective is skipped on some rank.
std::string compare_deciding(ProblemRun& run, bool kept_copy, const std::function<void()>& wait,
                             bool& copy_was_wrong);

}  // namespace kiln::bench
