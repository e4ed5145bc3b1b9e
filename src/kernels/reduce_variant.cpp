// Reduction knobs: presets, validation, launch arithmetic (see reduce_variant.hpp).
#include "kernels/reduce_variant.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "core/error.hpp"

namespace kiln::kernels {
namespace {

template <class Enum>
struct Names {
  std::vector<std::pair<Enum, std::string>> pairs;
  std::string name(Enum value) const {
    for (const auto& [v, n] : pairs)
      if (v == value) return n;
    return "?";
  }
  Enum parse(const std::string& text, const std::string& where) const {
    std::string accepted;
    for (const auto& [v, n] : pairs) {
      if (n == text) return v;
      accepted += (accepted.empty() ? "" : ", ") + n;
    }
    throw UsageError(fmt::format("{} {}: accepted {}", where, text, accepted));
  }
};

const Names<ReduceOp> kOps{
    {{ReduceOp::kSum, "sum"}, {ReduceOp::kMin, "min"}, {ReduceOp::kMax, "max"}}};
const Names<Workspace> kWorkspaces{
    {{Workspace::kGlobal, "global"}, {Workspace::kShared, "shared"}}};
const Names<Addressing> kAddressings{
    {{Addressing::kInterleaved, "interleaved"}, {Addressing::kSequential, "sequential"}}};
const Names<WarpTail> kTails{{{WarpTail::kNone, "none"},
                              {WarpTail::kUnrolled, "unrolled"},
                              {WarpTail::kShuffle, "shuffle"},
                              {WarpTail::kWarp, "warp"}}};
const Names<GridMode> kGrids{{{GridMode::kTiles, "tiles"}, {GridMode::kPersistent, "persistent"}}};
const Names<Completion> kCompletions{{{Completion::kMultiPass, "multipass"},
                                      {Completion::kAtomic, "atomic"},
                                      {Completion::kLastBlock, "lastblock"}}};

bool power_of_two(int v) {
  return v > 0 && (v & (v - 1)) == 0;
}

int parse_int(const std::string& text, const std::string& where) {
  try {
    std::size_t used = 0;
    const int value = std::stoi(text, &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  throw UsageError(fmt::format("{} {}: not an integer", where, text));
}

// The study's ladder (block of 1024 threads as in its A100 runs): each step adds one knob.
std::vector<ReduceVariant> make_presets() {
  ReduceVariant v1;
  v1.name = "v1";
  v1.workspace = Workspace::kGlobal;
  v1.addressing = Addressing::kInterleaved;
  v1.tail = WarpTail::kNone;
  v1.block = 1024;
  v1.items = 1;
  v1.vector_bytes = 4;
  v1.grid = GridMode::kTiles;
  v1.completion = Completion::kMultiPass;
  ReduceVariant v2a = v1;
  v2a.name = "v2a";
  v2a.addressing = Addressing::kSequential;
  ReduceVariant v2b = v2a;
  v2b.name = "v2b";
  v2b.workspace = Workspace::kShared;
  ReduceVariant v2c = v2b;  // first add during the load: two elements per thread
  v2c.name = "v2c";
  v2c.items = 2;
  ReduceVariant v3a = v2c;
  v3a.name = "v3a";
  v3a.tail = WarpTail::kUnrolled;
  ReduceVariant v3b = v3a;
  v3b.name = "v3b";
  v3b.tail = WarpTail::kShuffle;
  ReduceVariant v4 = v3b;
  v4.name = "v4";
  v4.complete_unroll = true;
  ReduceVariant vec;
  vec.name = "vec";
  vec.tail = WarpTail::kWarp;
  vec.complete_unroll = true;
  vec.block = 512;
  vec.items = 4;
  vec.vector_bytes = 16;
  vec.grid = GridMode::kPersistent;
  vec.completion = Completion::kLastBlock;
  ReduceVariant vec_atomic = vec;
  vec_atomic.name = "vec-atomic";
  vec_atomic.completion = Completion::kAtomic;
  return {v1, v2a, v2b, v2c, v3a, v3b, v4, vec, vec_atomic};
}

}  // namespace

std::string reduce_op_name(ReduceOp op) {
  return kOps.name(op);
}
ReduceOp parse_reduce_op(const std::string& text, const std::string& argument) {
  return kOps.parse(text, argument);
}

std::string to_string(const ReduceVariant& v) {
  return fmt::format(
      "workspace={} addressing={} tail={} unroll={} block={} items={} vector={} grid={} "
      "completion={}",
      kWorkspaces.name(v.workspace), kAddressings.name(v.addressing), kTails.name(v.tail),
      v.complete_unroll ? 1 : 0, v.block, v.items, v.vector_bytes, kGrids.name(v.grid),
      kCompletions.name(v.completion));
}

const std::vector<ReduceVariant>& reduce_presets() {
  static const std::vector<ReduceVariant> presets = make_presets();
  return presets;
}

std::vector<std::string> reduce_preset_names() {
  std::vector<std::string> names;
  for (const ReduceVariant& v : reduce_presets()) names.push_back(v.name);
  return names;
}

ReduceVariant parse_reduce_variant(const std::string& text, const std::string& argument) {
  for (const ReduceVariant& v : reduce_presets())
    if (v.name == text) return v;
  if (text.find('=') == std::string::npos) {
    std::string names;
    for (const std::string& n : reduce_preset_names()) names += (names.empty() ? "" : ", ") + n;
    throw UsageError(
        fmt::format("{} {}: not a preset ({}) nor a list of field=value", argument, text, names));
  }
  ReduceVariant v;
  v.name = "custom";
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    const auto eq = word.find('=');
    if (eq == std::string::npos) {
      throw UsageError(fmt::format("{}: '{}' is not field=value", argument, word));
    }
    const std::string key = word.substr(0, eq), value = word.substr(eq + 1);
    const std::string where = fmt::format("{} {}=", argument, key);
    if (key == "workspace")
      v.workspace = kWorkspaces.parse(value, where);
    else if (key == "addressing")
      v.addressing = kAddressings.parse(value, where);
    else if (key == "tail")
      v.tail = kTails.parse(value, where);
    else if (key == "unroll")
      v.complete_unroll = parse_int(value, where) != 0;
    else if (key == "block")
      v.block = parse_int(value, where);
    else if (key == "items")
      v.items = parse_int(value, where);
    else if (key == "vector")
      v.vector_bytes = parse_int(value, where);
    else if (key == "grid")
      v.grid = kGrids.parse(value, where);
    else if (key == "completion")
      v.completion = kCompletions.parse(value, where);
    else {
      throw UsageError(fmt::format(
          "{}: unknown field '{}'; accepted workspace, addressing, tail, unroll, block, items, "
          "vector, grid, completion",
          argument, key));
    }
  }
  return v;
}

std::optional<std::string> invalid_reason(const ReduceVariant& v, core::DType dtype, ReduceOp op) {
  if (!power_of_two(v.block) || v.block < 64 || v.block > 1024) {
    return fmt::format("block={}: must be a power of two in 64..1024 (tree steps halve it)",
                       v.block);
  }
  if (v.complete_unroll && v.block < 256) {
    return fmt::format(
        "unroll=1 block={}: complete unrolling is built for blocks of 256, 512 "
        "and 1024 threads",
        v.block);
  }
  if (v.items != 1 && v.items != 2 && v.items != 4 && v.items != 8) {
    return fmt::format("items={}: accepted 1, 2, 4, 8", v.items);
  }
  if (v.vector_bytes != 4 && v.vector_bytes != 16) {
    return fmt::format("vector={}: accepted 4 (one element per load) or 16", v.vector_bytes);
  }
  if (v.vector_bytes == 4 && v.items > 2) {
    return fmt::format(
        "vector=4 items={}: scalar loads are built with 1 or 2 items per thread "
        "(the study's steps); use vector=16 for more",
        v.items);
  }
  if (v.workspace == Workspace::kGlobal &&
      (v.tail != WarpTail::kNone || v.complete_unroll || v.grid != GridMode::kTiles)) {
    return "workspace=global is the study's first steps only: tail=none, unroll=0, grid=tiles";
  }
  if (v.addressing == Addressing::kInterleaved && v.tail != WarpTail::kNone) {
    return "addressing=interleaved leaves the partials spread over the block: the warp tails "
           "need addressing=sequential";
  }
  if (v.completion == Completion::kAtomic && op != ReduceOp::kSum && dtype != core::DType::kInt32) {
    return fmt::format(
        "completion=atomic {} of {}: CUDA has no native floating-point atomic "
        "min/max; use completion=lastblock or multipass",
        reduce_op_name(op), core::dtype_name(dtype));
  }
  return std::nullopt;
}

ReduceLaunch plan_reduce_launch(const ReduceVariant& v, int element_bytes,
                                std::uint64_t start_address, std::int64_t count,
                                std::int64_t resident_blocks) {
  ReduceLaunch launch;
  // vector=4 means one element per load whatever its size (2-byte types load 2 bytes).
  launch.vector_elements = v.vector_bytes == 16 ? std::max(1, 16 / element_bytes) : 1;
  if (launch.vector_elements == 1) {
    launch.vectors = count;
  } else {
    const std::uint64_t misalignment = start_address % 16;
    const std::int64_t to_boundary =
        misalignment == 0 ? 0 : static_cast<std::int64_t>((16 - misalignment) / element_bytes);
    launch.head = std::min(count, to_boundary);
    launch.vectors = (count - launch.head) / launch.vector_elements;
    launch.tail = count - launch.head - launch.vectors * launch.vector_elements;
  }
  const std::int64_t per_block = static_cast<std::int64_t>(v.block) * v.items;
  const std::int64_t tiles =
      std::max<std::int64_t>(1, (launch.vectors + per_block - 1) / per_block);
  launch.blocks = v.grid == GridMode::kTiles
                      ? tiles
                      : std::max<std::int64_t>(1, std::min(tiles, resident_blocks));
  return launch;
}

int multi_pass_count(const ReduceVariant& v, int element_bytes, std::int64_t count,
                     std::int64_t resident_blocks) {
  int passes = 0;
  // Passes after the first read the 4-byte partials from an aligned workspace.
  int bytes = element_bytes;
  do {
    count = plan_reduce_launch(v, bytes, 0, count, resident_blocks).blocks;
    bytes = 4;
    ++passes;
  } while (count > 1);
  return passes;
}

}  // namespace kiln::kernels

namespace kiln::kernels {

ReduceWorkspaceLayout plan_reduce_workspace(const ReduceVariant& v, int element_bytes,
                                            std::int64_t count, std::int64_t resident_blocks) {
  const auto align = [](std::size_t bytes) { return (bytes + 255) / 256 * 256; };
  // An aligned start gives the most vectors, hence the most blocks.
  const std::int64_t first = plan_reduce_launch(v, element_bytes, 0, count, resident_blocks).blocks;
  const std::int64_t second = plan_reduce_launch(v, 4, 0, first, resident_blocks).blocks;
  ReduceWorkspaceLayout layout;
  layout.counter_offset = 0;
  layout.partials_offset[0] = 256;
  layout.partials_offset[1] =
      layout.partials_offset[0] + align(static_cast<std::size_t>(first) * 4);
  layout.scratch_offset = layout.partials_offset[1] + align(static_cast<std::size_t>(second) * 4);
  const std::size_t scratch =
      v.workspace == Workspace::kGlobal ? static_cast<std::size_t>(first) * v.block * 4 : 0;
  layout.total_bytes = layout.scratch_offset + align(scratch);
  return layout;
}

}  // namespace kiln::kernels
