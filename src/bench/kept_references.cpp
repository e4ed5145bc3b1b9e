#include "bench/kept_references.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/cuda_check.hpp"

namespace kiln::bench {

bool KeptReferences::keepable(ProblemRun& run) {
  const std::vector<ProblemRun::OutputSpan> spans = run.reference_outputs();
  unsigned long long bytes = 0;
  for (const ProblemRun::OutputSpan& span : spans) bytes += span.bytes;
  return !spans.empty() && bytes <= kKeptReferenceBytes;
}

std::string KeptReferences::key(const std::string& run_key, std::uint64_t seed) {
  return fmt::format("{}/{}", run_key, seed);
}

void KeptReferences::keep(ProblemRun& run, const std::string& run_key,
                          const std::vector<std::uint64_t>& seeds, cudaStream_t stream,
                          const std::function<void()>& before_inputs,
                          const std::function<void()>& wait) {
  for (const std::uint64_t seed : seeds) {
    if (copies_.count(key(run_key, seed))) continue;
    before_inputs();
    run.make_inputs(seed);
    run.reference();
    std::vector<core::DeviceBuffer> copies;
    std::size_t bytes = 0;
    for (const ProblemRun::OutputSpan& span : run.reference_outputs()) {
      copies.emplace_back(span.bytes);
      KILN_CUDA_CHECK(cudaMemcpyAsync(copies.back().data(), span.data, span.bytes,
                                      cudaMemcpyDeviceToDevice, stream));
      bytes += span.bytes;
    }
    wait();
    bytes_ += bytes;
    copies_[key(run_key, seed)] = std::move(copies);
  }
}

bool KeptReferences::reference(ProblemRun& run, const std::string& run_key, std::uint64_t seed,
                               cudaStream_t stream) {
  const std::vector<ProblemRun::OutputSpan> spans = run.reference_outputs();
  const auto kept = copies_.find(key(run_key, seed));
  bool usable = kept != copies_.end() && kept->second.size() == spans.size();
  for (std::size_t i = 0; usable && i < spans.size(); ++i)
    usable = kept->second[i].bytes() == spans[i].bytes;
  if (!usable) {
    run.reference();
    return false;
  }
  for (std::size_t i = 0; i < spans.size(); ++i)
    KILN_CUDA_CHECK(cudaMemcpyAsync(spans[i].data, kept->second[i].data(), spans[i].bytes,
                                    cudaMemcpyDeviceToDevice, stream));
  return true;
}

void KeptReferences::forget(const std::string& run_key) {
  const std::string prefix = run_key + "/";
  for (auto it = copies_.begin(); it != copies_.end();) {
    if (it->first.rfind(prefix, 0) != 0) {
      ++it;
      continue;
    }
    for (const core::DeviceBuffer& b : it->second) bytes_ -= std::min(bytes_, b.bytes());
    it = copies_.erase(it);
  }
}

void KeptReferences::clear() {
  copies_.clear();
  bytes_ = 0;
}

std::vector<core::DeviceBuffer*> KeptReferences::buffers() {
  std::vector<core::DeviceBuffer*> all;
  for (auto& [key, copies] : copies_)
    for (core::DeviceBuffer& b : copies) all.push_back(&b);
  return all;
}

std::string compare_deciding(ProblemRun& run, bool kept_copy, const std::function<void()>& wait,
                             bool& copy_was_wrong) {
  std::string mismatch = run.compare();
  if (mismatch.empty() || !kept_copy) return mismatch;
  run.reference();
  wait();
  mismatch = run.compare();
  if (mismatch.empty()) copy_was_wrong = true;
  return mismatch;
}

}  // namespace kiln::bench
