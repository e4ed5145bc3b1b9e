// The strategy catalog (see strategy.hpp). Ideas after the CUDA reduction ladder (Harris,
// "Optimizing Parallel Reduction in CUDA"), CUB's and CUTLASS's building blocks, FlashAttention's
// online softmax and cuPilot's strategy list; the code is kiln's.
#include "evolve/strategy.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"

namespace kiln::evolve {
namespace {

using F = Family;
using R = Resource;

const std::vector<Family> kStreaming = {F::kMap, F::kReduceAxis, F::kPooling, F::kScan};
const std::vector<Family> kAll = {F::kMap,  F::kReduceAxis, F::kPooling,
                                  F::kScan, F::kMatmul,     F::kAttention};

std::vector<Strategy> build_catalog() {
  return {
      // --- How data reaches the registers ---
      {"scalar-loads",
       "load-path",
       "One 4-byte load per element per thread: the simplest path, coalesced across a warp.",
       kStreaming,
       R::kHbm,
       {{"unroll", {1, 2, 4, 8}}},
       {}},
      {"vector16-loads",
       "load-path",
       "16-byte loads and stores (float4), a scalar head and tail for alignment: a quarter of "
       "the memory instructions, more bytes in flight per thread.",
       kStreaming,
       R::kHbm,
       {{"unroll", {1, 2, 4}}},
       {}},
      {"cp-async-pipeline",
       "load-path",
       "Asynchronous copies global -> shared memory (cp.async) in a multi-stage pipeline, so "
       "the next tile loads while this one is computed.",
       {F::kReduceAxis, F::kPooling, F::kScan, F::kMatmul, F::kAttention},
       R::kHbm,
       {{"stages", {2, 3, 4}}},
       // What it stages stays on chip until used; split-row's units meet between kernels, so
       // nothing staged would outlive them (the norms' split-row, the only one it could join).
       {"split-row"}},
      {"register-prefetch",
       "prefetch",
       "Loads run ahead of the work in registers: while one chunk of a row is combined and "
       "stored, the loads of the next `chunks` chunks are already issued (plain loads into "
       "registers that the thread only waits for when it uses them). A kernel that walks a row "
       "chunk by chunk and synchronises inside each one otherwise has a single chunk in flight "
       "per block, too few bytes to keep HBM busy; unlike cp-async-pipeline it needs no shared "
       "memory and no extra copy.",
       {F::kScan},
       R::kHbm,
       {{"chunks", {1, 2}}},
       // cp-async-pipeline is the shared-memory form of the same idea.
       {"cp-async-pipeline"}},
      {"tma-bulk",
       "load-path",
       "Hopper's tensor memory accelerator: bulk tile copies with an mbarrier, issued by one "
       "thread, leaving the others free. stages: units in flight a block (1: the next unit is "
       "loaded once this one is written, other blocks on the SM overlap it); store 1: the map "
       "is written in place and stored by the TMA engine too; chunks: pieces of a stage, each "
       "refilled with the next unit's as soon as it is mapped and summed as soon as it lands, so "
       "one block's loads and stores overlap.",
       {F::kReduceAxis, F::kPooling, F::kScan, F::kMatmul, F::kAttention},
       R::kHbm,
       // chunks 1 is the whole stage refilled after the map (the kernel of 2026-11-25).
       {{"stages", {2, 3, 4, 1}}, {"store", {0, 1}}, {"chunks", {1, 2, 4, 8}}},
       // What it stages is one unit a block: split-row's and grid-split-row's units meet between
       // kernels or at a counter, and the norms stage those by cp.async instead.
       {"split-row", "grid-split-row"}},
      // --- Which thread does which work ---
      {"element-per-thread",
       "work-mapping",
       "One output element per thread, one-shot grid sized to the problem.",
       {F::kMap, F::kPooling},
       R::kLaunch,
       {{"threads", {256, 128, 512, 1024}}},
       {"persistent-grid"}},
      {"grid-stride",
       "work-mapping",
       "A grid sized to the SMs walks the data in strides: fewer blocks, no tail effects.",
       {F::kMap, F::kPooling},
       R::kOccupancy,
       {{"threads", {256, 128, 512, 1024}}, {"blocks_per_sm", {8, 1, 2, 4, 16, 32}}},
       {}},
      {"shared-tile",
       "work-mapping",
       "A block stages the input band its outputs need in shared memory (coalesced loads, each "
       "input read from memory once), then pools it in two passes: along the rows, then across "
       "them (max and average are separable), so an output costs a few shared-memory reads "
       "instead of a window of scattered global ones. For 1-D and 2-D windows.",
       {F::kPooling},
       R::kHbm,
       {{"threads", {256, 128, 512}}, {"outputs", {2, 1, 4}}, {"rows", {4, 1, 2, 8}}},
       {}},
      {"register-sweep",
       "work-mapping",
       "For stride-1 windows: a thread owns a few consecutive output columns of one plane and "
       "walks down a strip of output rows, reading each input row once straight from global "
       "memory (neighbouring threads' overlapping columns hit L1), pooling it along the row in "
       "registers and keeping the last window-height of row-pooled results in a register ring, "
       "so each new input row completes one output row (max and sum are separable). Every input "
       "is read from memory about once, with no shared memory and no barriers. For 1-D and 2-D "
       "windows.",
       {F::kPooling},
       R::kHbm,
       {{"threads", {256, 128, 512}}, {"outputs", {4, 2, 8, 1}}, {"rows", {32, 16, 64, 8}}},
       {}},
      {"warp-row-separable",
       "work-mapping",
       "A warp computes a segment of consecutive outputs of one output row: it streams the input "
       "rows of the window's outer taps (depth, height) with coalesced loads, a lane every 32nd "
       "column, pooling them column by column in registers, then stages the column results in "
       "its own slice of shared memory and pools them along the row at the stride and dilation. "
       "Only the warp synchronises; unroll_taps issues all the outer taps' loads together. Any "
       "window: strides, padding and dilation cost "
       "shared-memory indexing instead of scattered global loads.",
       {F::kPooling},
       R::kHbm,
       {{"outputs", {2, 1, 4, 8, 16}}, {"warps", {8, 4, 16}}, {"unroll_taps", {0, 1}}},
       {}},
      {"sliding-planes",
       "work-mapping",
       "For 3-D windows: a block owns a tile of outputs over height and width for several "
       "consecutive output depths and walks the input depths they need once, in order: each "
       "input depth's tile is staged in shared memory, pooled over height and width, and added to "
       "every output depth whose window takes it (a ring of accumulators in registers); an output "
       "depth is stored as soon as its last input depth is in. Every input is read from memory "
       "about once plus the tile's halo, where a walk per output re-reads each input depth for "
       "every output that uses it. The next depth's loads are in flight while one is pooled; "
       "scalar-loads' unroll is the outputs a thread computes along its row.",
       {F::kPooling},
       R::kHbm,
       {{"threads", {256, 128, 512}}, {"rows", {8, 4, 16, 2}}, {"planes", {16, 8, 32, 4}}},
       // Its tile loads are its own (4-byte, coalesced), and its grid is the tiles.
       {"vector16-loads", "persistent-grid"}},
      {"row-per-warp",
       "work-mapping",
       "A warp owns a row (or a reduced line): warp shuffles only, no shared memory; suits "
       "short rows.",
       {F::kReduceAxis, F::kScan},
       R::kLaunch,
       {{"warps_per_block", {4, 1, 2, 8, 16}}},
       {}},
      {"row-per-block",
       "work-mapping",
       "A block owns a row: the whole block reduces or scans it, shared memory between warps.",
       {F::kReduceAxis, F::kScan, F::kAttention},
       R::kOccupancy,
       {{"threads", {256, 128, 512, 1024}}},
       {}},
      {"split-row",
       "work-mapping",
       "A long row split across several blocks, partial results combined after (a second "
       "kernel or the last block to finish): parallelism when rows are few.",
       {F::kReduceAxis, F::kScan},
       R::kOccupancy,
       {{"splits", {4, 2, 8, 16, 32, 64, 128, 256}}, {"threads", {256, 512, 1024}}},
       {}},
      {"cluster-split-row",
       "work-mapping",
       "A row split across the blocks of a thread-block cluster, combined through distributed "
       "shared memory instead of global memory (16 blocks is Hopper's non-portable size).",
       {F::kReduceAxis},
       R::kL2,
       {{"cluster", {2, 4, 8, 16}}, {"threads", {256, 512, 1024}}},
       {}},
      {"grid-split-row",
       "work-mapping",
       "A segment split across blocks of one persistent launch whose blocks are all resident at "
       "once (a cooperative launch): the blocks of a segment publish partial statistics in global "
       "memory and wait for each other at an arrival counter instead of ending the kernel, so a "
       "unit kept in shared memory is read from HBM once even when the segment is larger than a "
       "cluster can hold; groups of blocks take segments in rounds.",
       {F::kReduceAxis},
       R::kHbm,
       {{"splits", {64, 128, 32, 16, 8, 4, 2, 132, 256}}, {"threads", {512, 1024, 256}}},
       {}},
      {"cutlass-sm90",
       "work-mapping",
       "CUTLASS 3.x warp-specialised sm90 GEMM: TMA loads into swizzled shared memory, wgmma "
       "tensor-core instructions issued by warp groups (cooperative: two on one tile; ping-pong: "
       "one a tile, alternating), thread-block clusters that multicast a tile to two SMs, a "
       "persistent tile scheduler with a raster order and swizzle for L2 reuse, accumulators "
       "promoted to CUDA-core fp32 adds every few instructions (the tensor cores truncate as they "
       "accumulate), and split-K as a batch of K slices summed afterwards for products with "
       "little M x N. 3xTF32 operands: both split in memory (two or three copies), or one read "
       "as stored and split into TF32 part and remainder in the consumers' registers, three "
       "register-sourced wgmma a k-block (A, or B with the product computed as C^T = B^T A^T), "
       "the other operand's two copies read from memory or, with shared_split, that operand "
       "too read as stored and split in shared memory as its stage arrives.",
       {F::kMatmul, F::kAttention},
       R::kCompute,
       // The defaults (first values) are the best of ten configurations measured on kb1-1 at
       // KernelBench's size (H100, docs/results/2026-11-25-sm90-matmul/call2): cooperative
       // 128 x 256 in 2 x 1 clusters, plain accumulation.
       {{"tile_m", {128, 64, 256}},
        {"tile_n", {256, 64, 128}},
        {"cluster_m", {2, 1}},
        {"schedule", {0, 1}},
        {"raster_n", {0, 1}},
        {"swizzle", {1, 2, 4, 8}},
        {"split_k", {1, 2, 4, 8, 16}},
        {"promote", {0, 16, 4, 8, 32}},
        // 2: the split writes two copies of each operand ([Xb | Xs]) and the GEMM's loads read
        // the first one twice (three k-phases over a virtual K of 3 kp) instead of three
        // copies: the splits are 12-39% of the sm90 products' time on one H200
        // (docs/results/2026-11-30c-direct-store, call F). K slices (split-K) are slices of the
        // virtual K; three copies where two would pad K by more than a sixteenth. Two first
        // (the default): they won on all ten products they apply to, split-K included
        // (docs/results/2026-11-30c-direct-store call G, 2026-11-30d-sliced-copies call 1).
        // 1: A is not split in memory at all: read as stored (staged K-major where it is not)
        // and split in the consumers' registers, three register-sourced wgmma a k-block
        // against B's two copies (matmul_sm90_register_split.hpp); plain accumulation only,
        // tiles at most 128 x 128. The default since it beat two copies on 9 of the 10 products
        // it was tried on, by 4-34% (one H200, docs/results/2026-11-30e-register-split call 3).
        {"copies", {1, 2, 3}},
        // With copies 1, the operand split in registers: 0 A, 1 B (the GEMM then computes
        // C^T = B^T A^T, so that the operand whose split costs more is read as stored).
        {"register_operand", {0, 1}},
        // With copies 1, the other operand too read as stored (or as one raw K-major copy where
        // it is not K-major) and split in shared memory (TF32 part in place, remainder into the
        // stage's second tile): no split pre-pass at all. 1: by the consumers when its stage
        // arrives; 2: by the producer warp group's idle fourth warp before the stage is handed
        // to the consumers (clusters of one block). 1 lost 14-20% on the compute-bound products
        // and won where the pre-pass is most of the time: kb1-6 0.397 -> 0.657 (K = 524288),
        // kb1-9 0.631 -> 0.698 (one H200, docs/results/2026-11-30f-set-after-rb): off by default.
        {"shared_split", {0, 1, 2}}},
       {}},
      {"cutlass-sm80-mma",
       "work-mapping",
       "CUTLASS 2.x multistage GEMM: cp.async pipelines into shared memory, warp tiles of "
       "mma.sync tensor-core instructions (the Ampere path, which runs on Hopper without TMA or "
       "wgmma), a tile swizzle for L2 reuse and serial split-K for products with little M x N.",
       {F::kMatmul, F::kAttention},
       R::kCompute,
       {{"tile_m", {128, 64, 256}},
        {"tile_n", {128, 64, 256}},
        {"tile_k", {16, 32}},
        {"warp", {64, 32}},
        {"stages", {3, 4, 5}},
        {"swizzle", {8, 1, 2, 4}},
        {"split_k", {1, 2, 4, 8, 16, 32, 64}}},
       {}},
      {"warp-mma-tiles",
       "work-mapping",
       "A 3xTF32 GEMM kiln writes itself on mma.sync m16n8k8 tensor-core instructions, the "
       "operand split fused: a block stages K chunks of its A and B panels in shared memory as "
       "stored, each warp splits its fragments into TF32 part and remainder in registers and "
       "accumulates a warp tile, and the finished tile goes from the accumulators straight to "
       "memory (streaming stores when stream_stores). No split pre-pass and no staged "
       "epilogue, so one block's stores overlap the others' products: for thin K, where "
       "writing C is the time (K up to 4096).",
       {F::kMatmul},
       R::kHbm,
       {{"warps_m", {2, 1, 4}},
        {"warps_n", {2, 4, 1}},
        {"warp_m", {64, 32}},
        {"warp_n", {64, 32}},
        {"chunk_k", {32, 16}},
        {"blocks_per_sm", {1, 2}},
        // Plain stores first: streaming (evict-first) stores cost 9-16% on kb1-7 and kb1-9
        // (H100, docs/results/2026-11-25-thin-k).
        {"stream_stores", {0, 1}}},
       // Triangular products skip blocks only on the sm90 path (a grouped GEMM).
       {"exploit-structure"}},
      // --- How partial results are combined ---
      {"shared-tree",
       "reduction",
       "Partial results combined by a tree in shared memory, sequential addressing (no bank "
       "conflicts, no divergent warps).",
       {F::kReduceAxis, F::kScan, F::kAttention},
       R::kOccupancy,
       {},
       {}},
      {"warp-shuffle",
       "reduction",
       "Warp shuffles inside each warp, shared memory only between warps.",
       {F::kReduceAxis, F::kScan, F::kAttention},
       R::kOccupancy,
       {},
       {}},
      {"last-block-combine",
       "completion",
       "Blocks write partials; the last block to finish (an atomic ticket) combines them in a "
       "fixed order: one kernel, deterministic.",
       {F::kReduceAxis},
       R::kLaunch,
       {},
       {}},
      {"interleaved-tree",
       "reduction",
       "The textbook's first block reduction: a tree in which thread t with t % 2s == 0 adds "
       "the value at t + s, s doubling (divergent warps, shared-memory bank conflicts); with "
       "in_global the tree runs in a global-memory scratch array instead of shared memory.",
       {F::kReduceAxis},
       R::kOccupancy,
       {{"in_global", {1, 0}}},
       {}},
      {"global-sequential-tree",
       "reduction",
       "A tree with sequential addressing (thread t < s adds the value at t + s, s halving: no "
       "divergence within a warp) that runs in a global-memory scratch array.",
       {F::kReduceAxis},
       R::kHbm,
       {},
       {}},
      {"cluster-dsmem",
       "reduction",
       "Blocks of a cluster combine through distributed shared memory.",
       {F::kReduceAxis},
       R::kL2,
       {},
       {}},
      {"block-tiles",
       "work-mapping",
       "Each block reduces tiles of threads x items consecutive elements to one partial value "
       "per block; the partials are combined after (another pass, an atomic or the last block).",
       {F::kReduceAxis},
       R::kOccupancy,
       {{"threads", {256, 128, 512, 1024, 64}}},
       {}},
      {"column-strips",
       "columns",
       "For a reduction over a strided (middle) dimension: each thread reduces several columns "
       "32 apart, so a warp reads columns x 128 contiguous bytes of every row it visits (longer "
       "bursts for the DRAM pages, more independent loads in flight per thread).",
       {F::kReduceAxis},
       R::kHbm,
       {{"columns", {4, 2, 8}}},
       {}},
      // --- How a block's last 32 values are combined (trees in shared or global memory) ---
      {"unrolled-last-warp",
       "warp-tail",
       "Once 32 threads remain, the last warp finishes the tree unrolled, without block "
       "barriers (the values volatile so each step sees the last).",
       {F::kReduceAxis},
       R::kLaunch,
       {},
       {"interleaved-tree", "warp-shuffle"}},
      {"shuffle-last-warp",
       "warp-tail",
       "Once 32 threads remain, the last warp finishes with register shuffles (__shfl_down_sync) "
       "instead of memory.",
       {F::kReduceAxis},
       R::kLaunch,
       {},
       {"interleaved-tree", "warp-shuffle"}},
      {"complete-unroll",
       "unrolling",
       "The block size is a compile-time constant and every loop of the block reduction is fully "
       "unrolled: no loop counters, no comparisons that the compiler cannot fold.",
       {F::kReduceAxis},
       R::kLaunch,
       {},
       {}},
      {"atomic-combine",
       "completion",
       "Each block adds its partial to the result with one atomic: a single pass, no second "
       "kernel (exact for integers; an order-dependent result for floats).",
       {F::kReduceAxis},
       R::kLaunch,
       {},
       {}},
      // --- How many times the data is read ---
      {"two-pass",
       "passes",
       "Statistics first (max, sum, mean), the map second: two reads of the data.",
       {F::kReduceAxis, F::kAttention},
       R::kHbm,
       {},
       {}},
      {"online-one-pass",
       "passes",
       "Running statistics updated as data streams (online softmax: rescale the sum when the "
       "maximum grows; Welford's mean and squared deviations for a variance), so the data is "
       "read once for the statistics.",
       {F::kReduceAxis, F::kAttention},
       R::kHbm,
       {},
       {}},
      // Its own group (2026-11-30; "passes" before): what is kept on chip combines with either
      // pass structure, and online statistics read the part not kept once more instead of twice,
      // which matters where L2 bandwidth is spent (the H200).
      {"keep-on-chip",
       "residency",
       "The row, or as much of it as fits, stays in registers or shared memory between the "
       "statistics and the map: what is kept is read from HBM once, the rest again (once more "
       "with online statistics, twice with two passes).",
       {F::kReduceAxis},
       R::kHbm,
       {{"max_row_kib", {64, 32, 96, 128, 192}}},
       {"split-row"}},
      // --- Independent options ---
      {"cache-streaming",
       "cache-policy",
       "Cache hints by reuse: the last read of each input element and every output store are "
       "marked evict-first (ld.global.cs / st.global.cs), so the L2 cache keeps the data that "
       "later passes (or neighbouring pooling windows) read again instead of the output "
       "streaming through it.",
       {F::kReduceAxis, F::kPooling, F::kScan},
       R::kL2,
       {},
       {}},
      {"fast-exp",
       "math",
       "Exponentials on the special-function unit: exp(d) as ex2.approx(d * log2 e), two "
       "instructions against expf's nine, relative error about 2^-22 (fp32 tolerance 1e-4). For "
       "kernels whose statistics or map take an exponential per element (softmax, cross entropy), "
       "where the instruction issue, not HBM, stretches the passes between the loads and the "
       "stores.",
       {F::kReduceAxis},
       R::kCompute,
       {},
       {}},
      {"fast-log",
       "math",
       "Logarithms of a ratio on the special-function unit: log(a / b) as __logf(__fdividef(a, "
       "b)), a reciprocal, two multiplies and a lg2.approx against an IEEE division and logf's "
       "fifteen instructions; relative error of the ratio about 2^-22, absolute error of the "
       "logarithm about 2^-21 near 1. For kernels that take a logarithm per element (the KL "
       "divergence), where the instruction issue, not HBM, holds the streaming back.",
       {F::kReduceAxis},
       R::kCompute,
       {},
       {}},
      {"persistent-grid",
       "grid",
       "A persistent grid (one wave of blocks) that takes work items in a loop.",
       kAll,
       R::kLaunch,
       {{"blocks_per_sm", {1, 2, 4}}},
       {"element-per-thread"}},
      {"fused-elementwise",
       "fusion",
       "Neighbouring element-wise work (scaling, masks, activations, a division by a norm) done "
       "in the same kernel as the main pass: fewer launches, fewer passes over memory.",
       kAll,
       R::kLaunch,
       {},
       {}},
      {"tf32x3",
       "precision",
       "fp32 products on tensor cores as three TF32 products (big*big + big*small + small*big), "
       "keeping fp32 accuracy at about a third of the TF32 rate.",
       {F::kMatmul, F::kAttention},
       R::kCompute,
       {},
       {}},
      {"exploit-structure",
       "structure",
       "Skip work the operands' structure makes zero or redundant (triangular, diagonal, "
       "symmetric operands). For triangular operands: the product's blocks of block x block "
       "inside the triangle, each over only the K blocks where both operands are non-zero, as "
       "one grouped GEMM (K ranges of more than slice_blocks blocks split into slices summed "
       "after, which also balances the SMs; group_blocks neighbouring blocks of a row in one "
       "group, fewer and larger GEMMs for a few zero terms); the operands are split only where "
       "they are read. With ranged, instead one plain GEMM (cutlass-sm90's with one operand split "
       "in registers) whose tile scheduler hands each output tile only its K range, the longest "
       "first, and the tiles off the triangle none (the block knobs then unused).",
       {F::kMatmul},
       R::kCompute,
       {{"block", {256, 512, 128}},
        {"slice_blocks", {4, 8, 2, 16}},
        {"group_blocks", {1, 2, 4}},
        {"ranged", {0, 1}, true}},
       // kiln generates it on the sm90 path only (a grouped GEMM).
       {"cutlass-sm80-mma"}},
  };
}

}  // namespace

std::string family_name(Family family) {
  switch (family) {
    case Family::kMap:
      return "map";
    case Family::kReduceAxis:
      return "reduce-axis";
    case Family::kPooling:
      return "pooling";
    case Family::kScan:
      return "scan";
    case Family::kMatmul:
      return "matmul";
    case Family::kAttention:
      return "attention";
  }
  return "?";
}

Family parse_family(const std::string& text) {
  for (int f = 0; f < kFamilies; ++f)
    if (family_name(static_cast<Family>(f)) == text) return static_cast<Family>(f);
  throw UsageError(fmt::format(
      "family '{}': accepted map, reduce-axis, pooling, scan, matmul, attention", text));
}

std::string resource_name(Resource resource) {
  switch (resource) {
    case Resource::kHbm:
      return "hbm";
    case Resource::kCompute:
      return "compute";
    case Resource::kLaunch:
      return "launch";
    case Resource::kL2:
      return "l2";
    case Resource::kOccupancy:
      return "occupancy";
  }
  return "?";
}

bool Strategy::applies_to(Family family) const {
  return std::find(families.begin(), families.end(), family) != families.end();
}

const Knob* Strategy::knob(const std::string& knob_name) const {
  for (const Knob& k : knobs)
    if (k.name == knob_name) return &k;
  return nullptr;
}

const std::vector<Strategy>& strategy_catalog() {
  static const std::vector<Strategy> catalog = build_catalog();
  return catalog;
}

const Strategy& find_strategy(const std::string& name) {
  for (const Strategy& s : strategy_catalog())
    if (s.name == name) return s;
  std::string known;
  for (const Strategy& s : strategy_catalog()) known += (known.empty() ? "" : ", ") + s.name;
  throw UsageError(fmt::format("strategy '{}': not in the catalog ({})", name, known));
}

std::vector<std::string> required_groups(Family family) {
  switch (family) {
    case Family::kMap:
    case Family::kPooling:
      return {"load-path", "work-mapping"};
    case Family::kReduceAxis:
      // "passes" only matters to the problems that map after reducing (norms, softmax): optional.
      return {"load-path", "work-mapping", "reduction"};
    case Family::kScan:
      return {"load-path", "work-mapping", "reduction"};
    case Family::kMatmul:
      // fp32 products need a stated precision path (3xTF32 on tensor cores is the only one yet).
      return {"work-mapping", "precision"};
    case Family::kAttention:
      return {"work-mapping", "passes", "precision"};
  }
  return {};
}

std::vector<const Strategy*> group_members(const std::string& group, Family family) {
  std::vector<const Strategy*> out;
  for (const Strategy& s : strategy_catalog())
    if (s.group == group && s.applies_to(family)) out.push_back(&s);
  return out;
}

}  // namespace kiln::evolve
