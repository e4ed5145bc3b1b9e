// An outside candidate as kiln handles it: a CUDA source file (entry point in
// include/kiln/candidate.h) compiled by nvcc into a shared library, then loaded with dlopen and
// checked for the entry point and ABI version. Compilation runs once, in the parent process,
// under a time limit; loading runs in each rank process.
#pragma once

#include <string>

#include "core/error.hpp"

#include "kiln/candidate.h"

namespace kiln::bench {

struct CandidateBuild {
  std::string library;  // path of the shared library
  std::string command;  // the nvcc command line, for the report
  std::string log;      // nvcc's output
};

// The candidate's own code did not build: nvcc failed or ran past its time. A judge's verdict
// (the candidate is rejected), where other UsageErrors are the caller's mistakes (no such file).
class CandidateBuildError : public UsageError {
 public:
  using UsageError::UsageError;
};

// Compiles `source` into `output_dir` (created if needed) for `arch` (e.g. "sm_90a"). Throws
// CandidateBuildError with nvcc's messages when the source does not compile, or when nvcc runs
// longer than `timeout_seconds`. A library built there from the same source by the same command
// is reused. `shared_cache` (a folder; empty: none) holds libraries by their code and flags
// across output folders: a source whose code, full-line comments aside, was compiled with the
// same flags before is copied from there instead of compiled (the evolution engine's set runs,
// where problems of one kind generate the same CUTLASS GEMM under another name).
//
// `split_when_marked`: a source marked for it (include/kiln/candidate_split.h) and not using
// CUTLASS is built split, device code by NVRTC and host code by the host compiler
// (split_build.hpp), 2-5.4x faster than nvcc; the evolution engine's screening builds. A split
// build that fails is followed by the whole-file nvcc build, so that the outcome never depends on
// the split path; its message stays in the log.
CandidateBuild compile_candidate(const std::string& source, const std::string& output_dir,
                                 const std::string& arch, int timeout_seconds,
                                 const std::string& shared_cache = "",
                                 bool split_when_marked = false);

// The directory whose kiln/candidate.h candidates include: KILN_INCLUDE_DIR, else include/ beside
// the build directory of this binary (<repo>/build/kiln -> <repo>/include), else the source tree
// it was built from.
std::string candidate_include_dir();

// Whether a candidate source includes CUTLASS's headers (then its build adds them, and takes
// 20-55 s of one core and a few GB of host memory).
bool includes_cutlass(const std::string& source_text);

using CandidateEntry = int (*)(const KilnCandidateArgs*);

class CandidateLibrary {
 public:
  // dlopen + the entry point; throws kiln::UsageError naming what is missing or mismatched.
  explicit CandidateLibrary(const std::string& library);
  ~CandidateLibrary();
  CandidateLibrary(const CandidateLibrary&) = delete;
  CandidateLibrary& operator=(const CandidateLibrary&) = delete;

  CandidateEntry entry() const { return entry_; }

 private:
  void* handle_ = nullptr;
  CandidateEntry entry_ = nullptr;
};

}  // namespace kiln::bench
