// The split build of a marked candidate (see split_build.hpp).
#include "bench/split_build.hpp"

#include <fmt/format.h>
#include <nvrtc.h>

#include <algorithm>
#include <cctype>
#include <memory>

#include "bench/candidate_library.hpp"
#include "bench/candidate_unit.hpp"
#include "core/error.hpp"

namespace kiln::bench {
namespace {

std::string trimmed(const std::string& text) {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r\n") + 1 - first);
}

// The macro arguments after `open` (the index just past the macro's '('): split at the top-level
// commas, up to the closing parenthesis. Parentheses, brackets and braces nest; a template's angle
// brackets do not (the preprocessor splits there too).
std::vector<std::string> macro_arguments(const std::string& text, std::size_t open) {
  std::vector<std::string> arguments(1);
  int depth = 0;
  for (std::size_t i = open; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') {
      if (depth == 0) return arguments;
      --depth;
    }
    if (c == ',' && depth == 0) {
      arguments.emplace_back();
      continue;
    }
    arguments.back() += c;
  }
  return {};  // no closing parenthesis: not a use of the macro
}

void check_nvrtc(nvrtcResult result, const std::string& what) {
  if (result != NVRTC_SUCCESS)
    throw Error(fmt::format("NVRTC {}: {}", what, nvrtcGetErrorString(result)));
}

// A C string literal holding `text` (octal escapes for anything outside plain printable ASCII).
std::string c_literal(const std::string& text) {
  std::string out = "\"";
  for (const unsigned char c : text) {
    if (c == '"' || c == '\\' || c < 0x20 || c >= 0x7f)
      out += fmt::format("\\{:03o}", static_cast<unsigned>(c));
    else
      out += static_cast<char>(c);
  }
  return out + "\"";
}

}  // namespace

std::vector<std::string> launched_kernels(const std::string& host) {
  // The name, and which argument names the kernel.
  static const std::pair<std::string, std::size_t> kMacros[] = {
      {"KILN_LAUNCH_EX", 1}, {"KILN_LAUNCH", 0}, {"KILN_KERNEL", 0}};
  std::vector<std::string> kernels;
  for (std::size_t at = host.find("KILN_"); at != std::string::npos;
       at = host.find("KILN_", at + 1)) {
    if (at > 0 && (std::isalnum(static_cast<unsigned char>(host[at - 1])) || host[at - 1] == '_'))
      continue;
    for (const auto& [macro, which] : kMacros) {
      if (host.compare(at, macro.size(), macro) != 0) continue;
      std::size_t open = at + macro.size();
      while (open < host.size() && (host[open] == ' ' || host[open] == '\t')) ++open;
      if (open >= host.size() || host[open] != '(') break;  // another identifier (KILN_LAUNCHES)
      const std::vector<std::string> arguments = macro_arguments(host, open + 1);
      if (arguments.size() > which) {
        const std::string kernel = trimmed(arguments[which]);
        if (!kernel.empty() && std::find(kernels.begin(), kernels.end(), kernel) == kernels.end())
          kernels.push_back(kernel);
      }
      break;
    }
  }
  return kernels;
}

std::optional<SplitSources> split_device_and_host(const std::string& content,
                                                  const std::string& source_name) {
  static const std::string kDevice = "// kiln-device:", kHost = "// kiln-host:";
  SplitSources split;
  enum class Region { kShared, kDevice, kHost } region = Region::kShared;
  bool marked = false;
  std::size_t start = 0, line_number = 0;
  while (start < content.size()) {
    std::size_t end = content.find('\n', start);
    const bool newline = end != std::string::npos;
    if (!newline) end = content.size();
    ++line_number;
    const std::string line = content.substr(start, end - start);
    const std::string ending = newline ? "\n" : "";
    const auto where = [&](const std::string& what) {
      return UsageError(fmt::format("{}:{}: {}", source_name, line_number, what));
    };
    Region line_region = region;  // a region's end marker belongs to it
    for (const auto& [marker, kind] :
         {std::pair{kDevice, Region::kDevice}, std::pair{kHost, Region::kHost}}) {
      if (is_marker_line(line, marker + " begin")) {
        if (region != Region::kShared)
          throw where("`" + marker + " begin` inside a region not yet ended");
        region = line_region = kind;
        marked = marked || kind == Region::kDevice;
      } else if (is_marker_line(line, marker + " end")) {
        if (region != kind) throw where("`" + marker + " end` without its begin");
        region = Region::kShared;
      }
    }
    split.device += line_region == Region::kHost ? ending : line + ending;
    split.host += line_region == Region::kDevice ? ending : line + ending;
    start = end + 1;
  }
  if (region != Region::kShared)
    throw UsageError(source_name + ": a `" + (region == Region::kDevice ? kDevice : kHost) +
                     " begin` without its end");
  if (!marked) return std::nullopt;
  split.kernels = launched_kernels(split.host);
  if (split.kernels.empty())
    throw UsageError(source_name +
                     ": marked for a split build, but its host code names no kernel through "
                     "KILN_LAUNCH, KILN_LAUNCH_EX or KILN_KERNEL (kiln/candidate_split.h)");
  return split;
}

DeviceImage compile_device_code(const std::string& device, const std::string& source_name,
                                const std::string& arch, const std::vector<std::string>& includes,
                                const std::vector<std::string>& kernels) {
  nvrtcProgram raw = nullptr;
  check_nvrtc(nvrtcCreateProgram(&raw, device.c_str(), source_name.c_str(), 0, nullptr, nullptr),
              "create program");
  const std::unique_ptr<_nvrtcProgram, void (*)(_nvrtcProgram*)> program(
      raw, [](_nvrtcProgram* p) { nvrtcDestroyProgram(&p); });
  for (const std::string& kernel : kernels)
    check_nvrtc(nvrtcAddNameExpression(raw, kernel.c_str()), "add name expression " + kernel);
  // nvcc's defaults for device code (-O3, IEEE division and square root, FMA contraction), so that
  // the split build and the judge's whole-file build give the same machine code.
  std::vector<std::string> options = {"--gpu-architecture=" + arch, "-std=c++17"};
  for (const std::string& dir : includes) options.push_back("-I" + dir);
  std::vector<const char*> pointers;
  for (const std::string& o : options) pointers.push_back(o.c_str());
  const nvrtcResult compiled =
      nvrtcCompileProgram(raw, static_cast<int>(pointers.size()), pointers.data());
  DeviceImage image;
  std::size_t log_size = 0;
  check_nvrtc(nvrtcGetProgramLogSize(raw, &log_size), "log size");
  image.log.resize(log_size);
  check_nvrtc(nvrtcGetProgramLog(raw, image.log.data()), "log");
  while (!image.log.empty() && image.log.back() == '\0') image.log.pop_back();
  if (compiled != NVRTC_SUCCESS)
    throw CandidateBuildError(fmt::format("{}: NVRTC failed ({}):\n{}", source_name,
                                          nvrtcGetErrorString(compiled), image.log));
  std::size_t cubin_size = 0;
  check_nvrtc(nvrtcGetCUBINSize(raw, &cubin_size), "cubin size");
  image.cubin.resize(cubin_size);
  check_nvrtc(nvrtcGetCUBIN(raw, image.cubin.data()), "cubin");
  for (const std::string& kernel : kernels) {
    const char* lowered = nullptr;
    check_nvrtc(nvrtcGetLoweredName(raw, kernel.c_str(), &lowered), "lowered name of " + kernel);
    image.lowered.emplace_back(kernel, lowered);
  }
  return image;
}

std::string embedding_text(const std::string& cubin_path, const DeviceImage& image) {
  std::string names;
  for (const auto& [expression, lowered] : image.lowered)
    names += c_literal(expression) + " \"\\0\" " + c_literal(lowered) + " \"\\0\"\n    ";
  // The assembler reads the cubin itself; aligned as the driver likes its images. The names end
  // with an empty expression.
  return fmt::format(
      R"(
// --- Added by kiln's split build: the device code's cubin and its kernels' names ---
asm(".section .rodata\n"
    ".balign 64\n"
    ".globl kiln_split_cubin\n"
    ".hidden kiln_split_cubin\n"
    "kiln_split_cubin:\n"
    ".incbin " {} "\n"
    ".previous\n");
extern "C" __attribute__((visibility("hidden"))) const char kiln_split_names[] =
    {}"";
)",
      c_literal(c_literal(cubin_path)), names);
}

}  // namespace kiln::bench
