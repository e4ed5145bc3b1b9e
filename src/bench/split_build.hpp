// The split build of a candidate marked for it (include/kiln/candidate_split.h): device code by
// NVRTC, in this process, into a cubin; host code by the host compiler with the cubin embedded.
// It exists for the evolution engine's speed (issue 20): nvcc spends about 1.5 s of CPU on a
// generated kernel, most of it in its front ends and host pass, where NVRTC builds the device code
// in about 0.2 s and g++ the small host part in about 0.1 s (docs/results/2026-11-28c-h200-engine/,
// section 5). The same source still builds whole with nvcc, as the judge's verdicts and
// `kiln evolve export` do.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln::bench {

// The two views of a marked source, each the whole file with the other side's regions emptied
// (line numbers kept, so that messages point at the file's lines).
struct SplitSources {
  std::string device;                // `// kiln-host:` regions emptied: NVRTC's input
  std::string host;                  // `// kiln-device:` regions emptied: the host compiler's
  std::vector<std::string> kernels;  // the kernels the host code names, as it writes them
};

// The two views, or nullopt when the source has no `// kiln-device: begin`. Throws
// kiln::UsageError naming `source_name` for a region without its end, an end without a begin, a
// region inside another, or a marked source that names no kernel through KILN_LAUNCH,
// KILN_LAUNCH_EX or KILN_KERNEL.
std::optional<SplitSources> split_device_and_host(const std::string& content,
                                                  const std::string& source_name);

// The kernel expressions in `host`: the first argument of each KILN_LAUNCH( and KILN_KERNEL(, the
// second of each KILN_LAUNCH_EX(, trimmed, each once, in order of appearance.
std::vector<std::string> launched_kernels(const std::string& host);

struct DeviceImage {
  std::string cubin;
  std::vector<std::pair<std::string, std::string>> lowered;  // expression -> NVRTC's lowered name
  std::string log;
};

// NVRTC on `device` for `arch` (a real architecture, e.g. "sm_90a") with these include folders.
// Throws CandidateBuildError with NVRTC's log when it does not compile.
DeviceImage compile_device_code(const std::string& device, const std::string& source_name,
                                const std::string& arch, const std::vector<std::string>& includes,
                                const std::vector<std::string>& kernels);

// The text appended to the host code: the cubin (by the assembler's .incbin of `cubin_path`) and
// the kernel names' table, under the names candidate_split.h reads.
std::string embedding_text(const std::string& cubin_path, const DeviceImage& image);

}  // namespace kiln::bench
