// Compiling and loading outside candidates (see candidate_library.hpp).
#include "bench/candidate_library.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "bench/candidate_unit.hpp"
#include "bench/split_build.hpp"
#include "core/error.hpp"
#include "core/run_command.hpp"

namespace kiln::bench {
namespace {

std::string quote(const std::string& text) {
  return core::shell_quoted(text);
}

}  // namespace

// See candidate_library.hpp.
bool includes_cutlass(const std::string& source_text) {
  return source_text.find("#include \"cutlass/") != std::string::npos ||
         source_text.find("#include <cutlass/") != std::string::npos;
}

std::string candidate_include_dir() {
  if (const char* dir = std::getenv("KILN_INCLUDE_DIR")) return dir;
  std::error_code error;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    const auto beside = exe.parent_path().parent_path() / "include";
    if (std::filesystem::is_regular_file(beside / "kiln" / "candidate.h")) return beside.string();
  }
  return std::string(KILN_SOURCE_DIR) + "/include";
}

namespace {

// nvcc: KILN_NVCC, else the compiler kiln itself was built with (when it exists here), else PATH.
std::string nvcc_path() {
  if (const char* nvcc = std::getenv("KILN_NVCC")) return nvcc;
  if (std::filesystem::is_regular_file(KILN_CUDA_COMPILER)) return KILN_CUDA_COMPILER;
  return "nvcc";
}

// The CUDA toolkit's root: two folders above nvcc when that is a path, else the one kiln was
// built with, else /usr/local/cuda.
std::string cuda_root() {
  const std::filesystem::path nvcc(nvcc_path());
  if (nvcc.is_absolute()) {
    const auto root = nvcc.parent_path().parent_path();
    if (std::filesystem::is_regular_file(root / "include" / "cuda_runtime_api.h"))
      return root.string();
  }
  if (std::filesystem::is_regular_file(std::string(KILN_CUDA_ROOT) + "/include/cuda_runtime_api.h"))
    return KILN_CUDA_ROOT;
  return "/usr/local/cuda";
}

// The host compiler of split builds: KILN_HOST_CXX, else the one kiln was built with (when it
// exists here), else g++ from PATH.
std::string host_compiler() {
  if (const char* cxx = std::getenv("KILN_HOST_CXX")) return cxx;
  if (std::filesystem::is_regular_file(KILN_HOST_CXX)) return KILN_HOST_CXX;
  return "g++";
}

// CUTLASS's headers for a candidate that includes them (the evolution engine's matmul kernels):
// KILN_CUTLASS_INCLUDE_DIR, else the repository's .deps/cutlass-*/include beside this binary's
// build folder (where the setup script puts them; a device call carries that folder), else the
// headers kiln was built with. Empty when none is found.
std::string cutlass_include_dir() {
  if (const char* dir = std::getenv("KILN_CUTLASS_INCLUDE_DIR")) return dir;
  std::error_code error;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    const auto deps = exe.parent_path().parent_path() / ".deps";
    if (std::filesystem::is_directory(deps, error))
      for (const auto& entry : std::filesystem::directory_iterator(deps, error))
        if (entry.path().filename().string().rfind("cutlass-", 0) == 0 &&
            std::filesystem::is_regular_file(entry.path() / "include" / "cutlass" / "cutlass.h"))
          return (entry.path() / "include").string();
  }
  if (std::filesystem::is_regular_file(std::string(KILN_CUTLASS_INCLUDE) + "/cutlass/cutlass.h"))
    return KILN_CUTLASS_INCLUDE;
  return "";
}

// nvcc's target flags for `arch`. A real architecture (sm_90a) gets its machine code alone:
// `-arch=sm_90a` also compiles the source a second time for compute_90 PTX, which the judge never
// runs (3.9 -> 2.9 s for a generated norm kernel, 12.5 -> 9.4 s for a CUTLASS GEMM, on the CPU
// machine). Anything else (native, a virtual architecture) goes to -arch as given.
std::string arch_flags(const std::string& arch) {
  const bool real = arch.rfind("sm_", 0) == 0 && arch.size() > 3 &&
                    std::all_of(arch.begin() + 3, arch.end(), [](char c) {
                      return std::isalnum(static_cast<unsigned char>(c)) != 0;
                    });
  if (!real) return "-arch=" + quote(arch);
  return fmt::format("-gencode arch=compute_{0},code=sm_{0}", arch.substr(3));
}

// `text` with every line that holds only a // comment emptied (its newline kept, so that
// __LINE__ and so the binary stay the same): the code a compiler sees. Not a C++ lexer: a comment
// line ending in a backslash continues onto the next, and a raw string may hold // lines. Neither
// occurs in generated code, and a false match could only pair two sources differing there.
std::string without_comment_lines(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::size_t first = text.find_first_not_of(" \t", start);
    const bool comment =
        first != std::string::npos && first + 1 < end && text.compare(first, 2, "//") == 0;
    if (!comment) out.append(text, start, end - start);
    if (end < text.size()) out.push_back('\n');
    start = end + 1;
  }
  return out;
}

std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t key = 0xcbf29ce484222325ull;
  for (const unsigned char c : text) key = (key ^ c) * 0x100000001b3ull;
  return key;
}

// The contents of every file under `dir` (relative paths and bytes, in path order), hashed.
std::uint64_t tree_fingerprint(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, error);
       !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error))
    if (it->is_regular_file(error)) files.push_back(it->path());
  std::sort(files.begin(), files.end());
  std::string text;
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    text += std::filesystem::relative(file, dir, error).string() + '\0' +
            std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()) +
            '\0';
  }
  return fnv1a(text);
}

// What a unit object's name stands for, in place of the compile command's paths: nvcc's release,
// the candidate headers' contents and CUTLASS's version (its version.h), besides the
// architecture and the flags. Units compiled on one machine then serve another whose checkout and
// toolkit sit elsewhere: scripts/prebuild_sm90_units.sh compiles the CUTLASS GEMM units without a
// GPU (40-120 s each on one core), and a device call that carries them builds none (a set run's
// matmul searches waited on those builds with the GPU idle, H200, 2026-11-29). Read once per
// process.
std::string unit_toolchain(const std::string& arch, const std::string& cutlass_dir) {
  static std::mutex guard;
  static std::map<std::string, std::string> known;
  const std::lock_guard<std::mutex> hold(guard);
  const std::string include_dir = candidate_include_dir();
  const std::string key = arch + '\0' + include_dir + '\0' + cutlass_dir;
  if (const auto found = known.find(key); found != known.end()) return found->second;
  std::string version;
  (void)core::run_command(quote(nvcc_path()) + " --version", version);
  // "release 13.0": objects of one release link together; a patch release (V13.0.88) of the
  // same toolkit on another machine does not make its units new.
  const std::size_t release = version.find("release ");
  version = release == std::string::npos ? version : version.substr(release);
  version = version.substr(0, version.find_first_of(",\n"));
  std::string text = fmt::format(
      "nvcc {} -std=c++17 -O3 {} -fPIC -fno-gnu-unique kiln-include {:016x} abi {} cudart {}",
      version, arch_flags(arch), tree_fingerprint(include_dir), KILN_CANDIDATE_ABI_VERSION,
      CUDART_VERSION);
  if (!cutlass_dir.empty()) {
    std::ifstream in(std::filesystem::path(cutlass_dir) / "cutlass" / "version.h",
                     std::ios::binary);
    text += fmt::format(" cutlass {:016x}", fnv1a(std::string((std::istreambuf_iterator<char>(in)),
                                                              std::istreambuf_iterator<char>())));
  }
  return known[key] = text;
}

// One lock per unit object path: the engine compiles a generation's candidates on several
// threads, and candidates of one configuration share their unit, which is built once.
std::mutex& unit_lock(const std::string& object) {
  static std::mutex guard;
  static std::map<std::string, std::unique_ptr<std::mutex>> locks;
  const std::lock_guard<std::mutex> hold(guard);
  auto& lock = locks[object];
  if (!lock) lock = std::make_unique<std::mutex>();
  return *lock;
}

// How a candidate's separate unit (candidate_unit.hpp) becomes an object: compiled by
// `compile_flags` into `folder`, named by its code (comment lines aside) and `toolchain`
// (unit_toolchain: what the flags stand for, not where), so that an object built there before, on
// this machine or another, is used as it is.
struct UnitObject {
  std::string object, unit_source, compile_flags, command;
  int timeout_seconds = 0;
  // The compile into `partial` (then renamed to the object, so no reader sees half of one).
  std::string compile_to(const std::string& partial) const {
    return fmt::format("timeout {} {} -c -o {} {}", timeout_seconds, compile_flags, quote(partial),
                       quote(unit_source));
  }
};
UnitObject plan_unit_object(const std::string& unit, const std::string& compile_flags,
                            const std::string& toolchain, const std::filesystem::path& folder,
                            int timeout_seconds) {
  const std::string key =
      fmt::format("{:016x}", fnv1a(toolchain + '\0' + without_comment_lines(unit)));
  UnitObject u;
  u.object = (folder / (key + ".o")).string();
  u.unit_source = (folder / (key + ".cu")).string();
  u.compile_flags = compile_flags;
  u.timeout_seconds = timeout_seconds;
  // The record (a library's key is made from it, so it names no process-specific file).
  u.command = u.compile_to(u.object + ".partial") + " && mv " + quote(u.object + ".partial") + " " +
              quote(u.object);
  return u;
}

// Builds the planned object unless it exists (then false: reused); throws as compile_candidate
// does.
bool build_unit_object(const UnitObject& u, const std::string& unit, const std::string& source,
                       int timeout_seconds) {
  const std::lock_guard<std::mutex> hold(unit_lock(u.object));
  if (std::filesystem::is_regular_file(u.object)) return false;
  std::filesystem::create_directories(std::filesystem::path(u.object).parent_path());
  std::ofstream(u.unit_source, std::ios::binary) << unit;
  const std::string partial = fmt::format("{}.{}.partial", u.object, getpid());
  std::string log;
  const int code = core::run_command(u.compile_to(partial), log);
  if (code == 124)
    throw CandidateBuildError(fmt::format("--source {}: nvcc ran longer than {} s on its kiln-unit",
                                          source, timeout_seconds));
  if (code != 0)
    throw CandidateBuildError(
        fmt::format("--source {}: nvcc failed on its kiln-unit (exit {}):\n{}", source, code, log));
  std::error_code error;
  std::filesystem::rename(partial, u.object, error);
  if (error)
    throw UsageError(fmt::format("--source {}: cannot keep its unit object {}: {}", source,
                                 u.object, error.message()));
  return true;
}

}  // namespace

namespace {

// The split build of a marked source into build.library (split_build.hpp). Throws
// CandidateBuildError when NVRTC or the host compiler fails or runs past its time, leaving
// `build` as it was (the whole-file build that follows uses its command).
void build_split(const std::string& source, const SplitSources& split,
                 const std::string& output_dir, const std::string& arch, int timeout_seconds,
                 CandidateBuild& build) {
  const std::string root = cuda_root();
  const std::string stem =
      (std::filesystem::path(output_dir) / std::filesystem::path(source).stem()).string();
  const DeviceImage image = compile_device_code(
      split.device, source, arch,
      {candidate_include_dir(), root + "/include", root + "/include/cccl"}, split.kernels);
  const std::string cubin = std::filesystem::absolute(stem + ".cubin").string();
  std::ofstream(cubin, std::ios::binary) << image.cubin;
  const std::string host = stem + ".host.cpp";
  std::ofstream(host, std::ios::binary) << split.host << embedding_text(cubin, image);
  // The host part with the CUDA runtime linked in statically, as nvcc's -shared does.
  const std::string command = fmt::format(
      "timeout {} {} -std=c++17 -O2 -shared -fPIC -fno-gnu-unique -DKILN_SPLIT_HOST -I{} -I{} "
      "-o {} {} -L{} -lcudart_static -ldl -lrt -lpthread",
      timeout_seconds, quote(host_compiler()), quote(candidate_include_dir()),
      quote(root + "/include"), quote(build.library), quote(host), quote(root + "/lib64"));
  std::string log;
  const int code = core::run_command(command, log);
  if (code == 124)
    throw CandidateBuildError(fmt::format("--source {}: the host compiler ran longer than {} s",
                                          source, timeout_seconds));
  if (code != 0)
    throw CandidateBuildError(
        fmt::format("--source {}: the host compiler failed on the host code (exit {}):\n{}", source,
                    code, log));
  build.command = "NVRTC (" + arch + ") on the device code; " + command;
  build.log = image.log + log;
}

}  // namespace

CandidateBuild compile_candidate(const std::string& source, const std::string& output_dir,
                                 const std::string& arch, int timeout_seconds,
                                 const std::string& shared_cache, bool split_when_marked) {
  if (!std::filesystem::is_regular_file(source)) {
    throw UsageError("--source " + source + ": no such file");
  }
  if (timeout_seconds < 1) throw UsageError("compile timeout must be at least 1 s");
  std::filesystem::create_directories(output_dir);
  CandidateBuild build;
  build.library =
      (std::filesystem::path(output_dir) / (std::filesystem::path(source).stem().string() + ".so"))
          .string();
  std::ifstream text(source, std::ios::binary);
  const std::string content((std::istreambuf_iterator<char>(text)),
                            std::istreambuf_iterator<char>());
  // CUTLASS's headers only for a source that includes them, so that every other command (and
  // the reuse below) stays what it was.
  std::string extra_include, cutlass_dir;
  if (includes_cutlass(content)) {
    cutlass_dir = cutlass_include_dir();
    if (cutlass_dir.empty())
      throw UsageError("--source " + source +
                       ": includes CUTLASS, whose headers were not found (set "
                       "KILN_CUTLASS_INCLUDE_DIR to a CUTLASS include folder)");
    extra_include = " -I" + quote(cutlass_dir);
  }
  // -fno-gnu-unique: g++ makes template static members (and statics of inline functions)
  // STB_GNU_UNIQUE, which the dynamic linker shares across every library of the process whatever
  // RTLD_LOCAL says. Two candidates judged in one process that instantiate the same CUTLASS GEMM
  // then shared GemmUniversalBase's "device properties initialised" flag, and the second one's
  // kernel never had its shared-memory limit raised: its launch failed (H100, 2026-11-25). Plain
  // weak symbols stay in their own library.
  build.command = fmt::format(
      "timeout {} {} -std=c++17 -O3 {} -shared -Xcompiler -fPIC "
      "-Xcompiler -fno-gnu-unique -I{}{} -o {} {}",
      timeout_seconds, quote(nvcc_path()), arch_flags(arch), quote(candidate_include_dir()),
      extra_include, quote(build.library), quote(source));
  // A split build when asked and marked, for a real architecture and without CUTLASS (whose
  // headers NVRTC is not given); its own key, so that a whole-file build of the same source never
  // reuses it.
  std::string split_failure;
  if (split_when_marked && extra_include.empty() && arch.rfind("sm_", 0) == 0) {
    if (const std::optional<SplitSources> marked =
            split_device_and_host(content, "--source " + source)) {
      const std::string key_path = build.library + ".key";
      const std::string key_text = fmt::format(
          "split {:016x}", fnv1a(fmt::format("split {} {} abi {} cudart {}", arch, host_compiler(),
                                             KILN_CANDIDATE_ABI_VERSION, CUDART_VERSION) +
                                 '\0' + content));
      std::string previous;
      if (std::filesystem::is_regular_file(build.library) &&
          std::getline(std::ifstream(key_path), previous) && previous == key_text) {
        build.command = "NVRTC (" + arch + ") and the host compiler: reused";
        build.log = "(reused: built split from the same source)";
        return build;
      }
      std::filesystem::remove(key_path);
      try {
        build_split(source, *marked, output_dir, arch, timeout_seconds, build);
        std::ofstream(key_path) << key_text << "\n";
        return build;
      } catch (const CandidateBuildError& e) {
        split_failure = e.what();  // the whole-file build decides
      }
    }
  }
  // Marked separate units: each object from the unit cache (the shared cache's, else the output
  // folder's), then the rest compiled and all linked.
  const std::string whole_file_command = build.command;
  const std::optional<SplitCandidateSource> split =
      split_candidate_unit(content, "--source " + source);
  std::vector<UnitObject> units;
  std::string rest_source, rest_steps;
  if (split) {
    const std::string compile_flags = fmt::format(
        "{} -std=c++17 -O3 {} -Xcompiler -fPIC -Xcompiler -fno-gnu-unique -I{}{}",
        quote(nvcc_path()), arch_flags(arch), quote(candidate_include_dir()), extra_include);
    const std::filesystem::path unit_folder =
        std::filesystem::path(shared_cache.empty() ? output_dir : shared_cache) / "units";
    std::string unit_commands, unit_objects;
    for (const std::string& text : split->units) {
      units.push_back(plan_unit_object(text, compile_flags, unit_toolchain(arch, cutlass_dir),
                                       unit_folder, timeout_seconds));
      unit_commands += units.back().command + " && ";
      unit_objects += " " + quote(units.back().object);
    }
    rest_source = (std::filesystem::path(output_dir) /
                   (std::filesystem::path(source).stem().string() + ".rest.cu"))
                      .string();
    const std::string rest_object = rest_source + ".o";
    rest_steps = fmt::format("timeout {} {} -c -o {} {} && timeout {} {} {} -shared -o {} {}{}",
                             timeout_seconds, compile_flags, quote(rest_object), quote(rest_source),
                             timeout_seconds, quote(nvcc_path()), arch_flags(arch),
                             quote(build.library), quote(rest_object), unit_objects);
    build.command = unit_commands + rest_steps;
  }
  // A library built from the same source by the same command is reused (the evolution engine
  // compiles a generation's candidates ahead, in parallel, before judging them one by one). The
  // key is the whole-file command's: a source with a unit links the same code in two steps, and
  // a judge that finds its library built with the unit in another folder's cache reuses it.
  const std::uint64_t key = fnv1a(whole_file_command + '\0' + content);
  const std::string key_path = build.library + ".key";
  const std::string key_text = fmt::format("{:016x}", key);
  if (std::filesystem::is_regular_file(build.library)) {
    std::ifstream stored(key_path);
    std::string previous;
    if (stored >> previous && previous == key_text) {
      build.log = "(reused: built from the same source by the same command)";
      return build;
    }
  }
  std::filesystem::remove(key_path);
  // The shared cache: the same code (full-line comments aside) compiled with the same flags by
  // another run, e.g. another problem's identical CUTLASS GEMM in a set run.
  std::filesystem::path cached;
  if (!shared_cache.empty()) {
    // The flags, the candidate ABI and the CUDA this kiln was built with (a cache kept across
    // kiln or toolkit versions is not read), then the code.
    const std::string flags =
        fmt::format("{} -std=c++17 -O3 {} -Xcompiler -fno-gnu-unique -I{}{} abi {} cudart {}",
                    nvcc_path(), arch_flags(arch), candidate_include_dir(), extra_include,
                    KILN_CANDIDATE_ABI_VERSION, CUDART_VERSION);
    const std::uint64_t code_key = fnv1a(flags + '\0' + without_comment_lines(content));
    cached = std::filesystem::path(shared_cache) / fmt::format("{:016x}.so", code_key);
    std::error_code error;
    if (std::filesystem::is_regular_file(cached, error) &&
        std::filesystem::copy_file(cached, build.library,
                                   std::filesystem::copy_options::overwrite_existing, error)) {
      std::ofstream(key_path) << key_text;
      build.log = "(copied from the build cache " + shared_cache +
                  ": the same code, comments aside, by the same flags)";
      return build;
    }
  }
  int code = 0;
  if (split) {
    // Each unit's two steps (compile, keep) run only when its object is not built yet; the log
    // opens with how many were (build.command is the recipe either way).
    int reused = 0;
    for (std::size_t u = 0; u < units.size(); ++u)
      reused += build_unit_object(units[u], split->units[u], source, timeout_seconds) ? 0 : 1;
    std::ofstream(rest_source, std::ios::binary) << split->rest;
    code = core::run_command(rest_steps, build.log);
    build.log =
        fmt::format("(kiln-units: {} of {} reused from {}, {} compiled)\n", reused, units.size(),
                    std::filesystem::path(units.front().object).parent_path().string(),
                    static_cast<int>(units.size()) - reused) +
        build.log;
  } else {
    code = core::run_command(build.command, build.log);
  }
  if (!split_failure.empty())
    build.log =
        "(the split build failed, so nvcc built it whole: " + split_failure + ")\n" + build.log;
  if (code == 124) {
    throw CandidateBuildError(
        fmt::format("--source {}: nvcc ran longer than {} s", source, timeout_seconds));
  }
  if (code != 0) {
    throw CandidateBuildError(
        fmt::format("--source {}: nvcc failed (exit {}):\n{}", source, code, build.log));
  }
  std::ofstream(key_path) << key_text;
  if (!cached.empty()) {
    // Into the cache under a temporary name, then renamed: a parallel compile of the same code
    // never reads half a library. A failure here only costs the next run a compile.
    std::error_code error;
    std::filesystem::create_directories(cached.parent_path(), error);
    const std::filesystem::path partial =
        cached.string() +
        fmt::format(".{}.{}.tmp", getpid(), std::hash<std::string>{}(build.library));
    if (std::filesystem::copy_file(build.library, partial,
                                   std::filesystem::copy_options::overwrite_existing, error))
      std::filesystem::rename(partial, cached, error);
  }
  return build;
}

CandidateLibrary::CandidateLibrary(const std::string& library) {
  handle_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    throw UsageError(fmt::format("candidate {}: cannot load: {}", library, dlerror()));
  }
  entry_ = reinterpret_cast<CandidateEntry>(dlsym(handle_, "kiln_candidate_run"));
  if (entry_ == nullptr) {
    dlclose(handle_);
    throw UsageError(
        fmt::format("candidate {}: no kiln_candidate_run (define it with C linkage, see "
                    "include/kiln/candidate.h)",
                    library));
  }
  using Version = int (*)();
  if (auto version = reinterpret_cast<Version>(dlsym(handle_, "kiln_candidate_abi_version"))) {
    const int v = version();
    if (v != KILN_CANDIDATE_ABI_VERSION) {
      dlclose(handle_);
      throw UsageError(fmt::format("candidate {}: written for ABI version {}, kiln has {}", library,
                                   v, KILN_CANDIDATE_ABI_VERSION));
    }
  }
}

CandidateLibrary::~CandidateLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

}  // namespace kiln::bench
