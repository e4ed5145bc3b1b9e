// A reduction variant is a value of explicit, combinable knobs (as CUB's tuning policies are): the
// steps of the tensor-reduction study's ladder (v1 interleaved addressing ... v4 complete unroll,
// after Harris, "Optimizing Parallel Reduction in CUDA") and the modern ones (16-byte vector
// loads, items per thread, a persistent grid, single-pass completion). Host arithmetic only:
// validation with a reason, the launch shape, printing and parsing; kernels are in reduce.cu*.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.hpp"

namespace kiln::kernels {

enum class ReduceOp { kSum, kMin, kMax };
std::string reduce_op_name(ReduceOp op);  // "sum", "min", "max"
ReduceOp parse_reduce_op(const std::string& text, const std::string& argument);

// Where a block's tree reduction runs: in a global-memory scratch array (the study's first steps)
// or in shared memory (v2b on).
enum class Workspace { kGlobal, kShared };
// Which threads combine at each tree step: interleaved (v1: thread t with t % 2s == 0 takes t+s,
// divergent) or sequential (v2a on: thread t < s takes t+s, no divergence, no bank conflicts).
enum class Addressing { kInterleaved, kSequential };
// How the last 32 partial values are combined: by the tree with barriers (none), by the last warp
// unrolled without block barriers (v3a), by warp shuffles (v3b), or the whole block by warp
// shuffles first and then the warp sums (warp: the modern block reduction, no tree at all).
enum class WarpTail { kNone, kUnrolled, kShuffle, kWarp };
// Grid: one block per tile of block x items elements (classic), or a persistent grid of
// (SMs x resident blocks) striding over the array.
enum class GridMode { kTiles, kPersistent };
// Completion: relaunch on the partials until one value is left (multi-pass), combine each block's
// value into the result with an atomic (single pass, not deterministic for floats), or let the last
// block to finish reduce every block's partial (single pass, deterministic).
enum class Completion { kMultiPass, kAtomic, kLastBlock };

struct ReduceVariant {
  std::string name;  // preset name, or "custom"
  Workspace workspace = Workspace::kShared;
  Addressing addressing = Addressing::kSequential;
  WarpTail tail = WarpTail::kWarp;
  bool complete_unroll = false;  // v4: block size a template constant, loops fully unrolled
  int block = 256;               // threads per block: 64..1024, a power of two
  int items = 1;                 // loads per thread per tile / grid-stride step: 1, 2, 4, 8
  int vector_bytes = 16;         // 4 (one element per load, 2-byte types: 2-byte loads) or 16
  GridMode grid = GridMode::kPersistent;
  Completion completion = Completion::kLastBlock;
};

// "workspace=shared addressing=sequential tail=warp unroll=0 block=256 items=4 vector=16
//  grid=persistent completion=lastblock"
std::string to_string(const ReduceVariant& variant);
// Parses a preset name or the format above (fields missing keep the defaults); throws
// kiln::UsageError naming `argument`, the field and the accepted values.
ReduceVariant parse_reduce_variant(const std::string& text, const std::string& argument);

// The study's ladder, v1 .. v4, then kiln's own: "vec" (16-byte loads, warp-shuffle block
// reduction, persistent grid, last-block completion) and "vec-atomic".
const std::vector<ReduceVariant>& reduce_presets();
std::vector<std::string> reduce_preset_names();

// Why `variant` cannot reduce `dtype` with `op`, or nullopt when it can.
std::optional<std::string> invalid_reason(const ReduceVariant& variant, core::DType dtype,
                                          ReduceOp op);

// The launch of one pass over `count` elements of `element_bytes` at byte address
// `start_address` (its alignment decides the scalar head before the 16-byte body).
struct ReduceLaunch {
  std::int64_t head = 0;     // scalar elements before the first 16-byte boundary
  std::int64_t vectors = 0;  // loads of vector_bytes in the body
  std::int64_t tail = 0;     // scalar elements after the body
  std::int64_t blocks = 0;   // grid size of the pass
  int vector_elements = 1;
};
// `resident_blocks` is the device's SM count x blocks resident per SM (persistent grid size).
ReduceLaunch plan_reduce_launch(const ReduceVariant& variant, int element_bytes,
                                std::uint64_t start_address, std::int64_t count,
                                std::int64_t resident_blocks);

// Number of passes multi-pass completion needs for `count` elements (each pass leaves one value per
// block), and the partial values it keeps in its workspace at most.
int multi_pass_count(const ReduceVariant& variant, int element_bytes, std::int64_t count,
                     std::int64_t resident_blocks);

}  // namespace kiln::kernels

namespace kiln::kernels {

// Where reduce() keeps its state in the caller's workspace: a completion counter (last-block
// mode; zero before the first call, and every call leaves it zero), two partial-value arrays that
// multi-pass completion ping-pongs between, and the global-memory tree scratch (workspace=global).
struct ReduceWorkspaceLayout {
  std::size_t counter_offset = 0;
  std::size_t partials_offset[2] = {0, 0};
  std::size_t scratch_offset = 0;
  std::size_t total_bytes = 0;
};
ReduceWorkspaceLayout plan_reduce_workspace(const ReduceVariant& variant, int element_bytes,
                                            std::int64_t count, std::int64_t resident_blocks);

}  // namespace kiln::kernels
