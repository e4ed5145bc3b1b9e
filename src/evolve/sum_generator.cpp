// Whole-array sum code generation (see sum_generator.hpp). Ideas after Harris's reduction ladder
// and CUB's single-pass reductions; the code is kiln's.
#include "evolve/sum_generator.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace kiln::evolve {

std::optional<std::string> whole_sum_element(const std::string& problem) {
  if (problem == "reduce-sum-int32") return "int";
  return std::nullopt;
}

const StrategySet& sum_generated_strategies() {
  static const StrategySet generated = {
      "scalar-loads",       "vector16-loads",         "block-tiles",     "persistent-grid",
      "interleaved-tree",   "global-sequential-tree", "shared-tree",     "warp-shuffle",
      "unrolled-last-warp", "shuffle-last-warp",      "complete-unroll", "atomic-combine",
      "last-block-combine"};
  return generated;
}

Genome naive_sum_genome() {
  Genome g;
  g.family = Family::kReduceAxis;
  g.strategies = {"scalar-loads", "block-tiles", "interleaved-tree"};
  g.knobs = {
      {"scalar-loads.unroll", 1}, {"block-tiles.threads", 256}, {"interleaved-tree.in_global", 1}};
  return g;
}

namespace {

// Each thread's sum over its elements of one tile (kThreads x kItems loads of kVector elements).
std::string load_part(bool vector16) {
  if (!vector16) {
    return R"(// One tile: kItems loads per thread, each a coalesced sweep of the block over kThreads elements.
__device__ __forceinline__ unsigned tile_sum(const unsigned* __restrict__ in, long long n,
                                             long long tile, int /*aligned*/) {
  unsigned sum = 0;
  const long long base = tile * kTile + threadIdx.x;
#pragma unroll
  for (int u = 0; u < kItems; ++u) {
    const long long i = base + static_cast<long long>(u) * kThreads;
    if (i < n) sum += in[i];
  }
  return sum;
}
)";
  }
  return R"(// One tile: kItems 16-byte loads per thread (4 elements each); scalar loads at the array's end
// or when the array does not start on a 16-byte boundary.
__device__ __forceinline__ unsigned tile_sum(const unsigned* __restrict__ in, long long n,
                                             long long tile, int aligned) {
  unsigned sum = 0;
  const long long base = tile * kTile + 4LL * threadIdx.x;
#pragma unroll
  for (int u = 0; u < kItems; ++u) {
    const long long i = base + 4LL * u * kThreads;
    if (aligned && i + 3 < n) {
      const uint4 v = __ldg(reinterpret_cast<const uint4*>(in + i));
      sum += v.x + v.y + v.z + v.w;
    } else {
      for (int e = 0; e < 4; ++e)
        if (i + e < n) sum += in[i + e];
    }
  }
  return sum;
}
)";
}

// The block's total (valid in thread 0) from every thread's `sum`; `tree` is the tree's storage
// (shared memory or this block's slice of the global scratch array).
std::string block_part(const Genome& g) {
  const bool complete = g.has("complete-unroll");
  const std::string block = complete ? "kThreads" : "static_cast<int>(blockDim.x)";
  const std::string unroll = complete ? "#pragma unroll\n" : "";
  std::string body;
  if (g.has("warp-shuffle")) {
    body = fmt::format(
        R"(  // Warp shuffles inside each warp, then the first warp over the warp totals.
  __shared__ unsigned warp_sums[32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
{unroll}  for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, o);
  if (lane == 0) warp_sums[warp] = sum;
  __syncthreads();
  if (warp == 0) {{
    sum = lane < {block} / 32 ? warp_sums[lane] : 0u;
{unroll}    for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, o);
  }}
  return sum;
)",
        fmt::arg("unroll", unroll), fmt::arg("block", block));
  } else if (g.has("interleaved-tree")) {
    body = fmt::format(R"(  // Interleaved addressing: thread t with t % 2s == 0 adds t + s.
  const int t = threadIdx.x;
  tree[t] = sum;
  __syncthreads();
{unroll}  for (int s = 1; s < {block}; s *= 2) {{
    if (t % (2 * s) == 0) tree[t] += tree[t + s];
    __syncthreads();
  }}
  return tree[0];
)",
                       fmt::arg("unroll", unroll), fmt::arg("block", block));
  } else {
    // Sequential addressing (shared-tree or global-sequential-tree), with an optional warp tail.
    const bool unrolled = g.has("unrolled-last-warp"), shuffled = g.has("shuffle-last-warp");
    const bool tail = unrolled || shuffled;
    body = fmt::format(R"(  // Sequential addressing: thread t < s adds t + s.
  const int t = threadIdx.x;
  tree[t] = sum;
  __syncthreads();
{unroll}  for (int s = {block} / 2; s > {stop}; s >>= 1) {{
    if (t < s) tree[t] += tree[t + s];
    __syncthreads();
  }}
)",
                       fmt::arg("unroll", unroll), fmt::arg("block", block),
                       fmt::arg("stop", tail ? 32 : 0));
    if (unrolled) {
      body +=
          R"(  // The last warp without block barriers: each step reads both values, then writes.
  if (t < 32) {
    volatile unsigned* v = tree;
    unsigned x;
    x = v[t] + v[t + 32]; __syncwarp(); v[t] = x; __syncwarp();
    x = v[t] + v[t + 16]; __syncwarp(); v[t] = x; __syncwarp();
    x = v[t] + v[t + 8];  __syncwarp(); v[t] = x; __syncwarp();
    x = v[t] + v[t + 4];  __syncwarp(); v[t] = x; __syncwarp();
    x = v[t] + v[t + 2];  __syncwarp(); v[t] = x; __syncwarp();
    x = v[t] + v[t + 1];  __syncwarp(); v[t] = x;
  }
  return tree[0];
)";
    } else if (shuffled) {
      body += fmt::format(R"(  // The last warp by register shuffles.
  unsigned x = 0;
  if (t < 32) {{
    x = tree[t] + tree[t + 32];
{unroll}    for (int o = 16; o > 0; o >>= 1) x += __shfl_down_sync(0xffffffffu, x, o);
  }}
  return x;
)",
                          fmt::arg("unroll", unroll));
    } else {
      body += "  return tree[0];\n";
    }
  }
  return fmt::format(
      R"(// The block's total, valid in thread 0. Starts with a barrier: the storage may be in use by
// the block's previous reduction (the last block reduces twice).
__device__ __forceinline__ unsigned block_sum(unsigned sum, unsigned* tree) {{
  __syncthreads();
{body}}}
)",
      fmt::arg("body", body));
}

}  // namespace

std::string generate_sum_candidate(const Genome& g, const std::string& problem) {
  const std::optional<std::string> element = whole_sum_element(problem);
  if (!element) throw UsageError(fmt::format("{}: not a whole-array sum problem", problem));
  require_translatable(g, Family::kReduceAxis, sum_generated_strategies(), "whole-array sum");
  if (!g.has("block-tiles"))
    throw UsageError(fmt::format("{}: the whole-array sum needs block-tiles", g.describe()));
  const bool vector16 = g.has("vector16-loads");
  const int items =
      vector16 ? g.knob("vector16-loads", "unroll") : g.knob("scalar-loads", "unroll");
  const int threads = g.knob("block-tiles", "threads");
  const bool persistent = g.has("persistent-grid");
  const int per_sm = persistent ? g.knob("persistent-grid", "blocks_per_sm") : 0;
  const bool global_tree = g.has("global-sequential-tree") ||
                           (g.has("interleaved-tree") && g.knob("interleaved-tree", "in_global"));
  const std::string completion = g.has("atomic-combine")       ? "atomic"
                                 : g.has("last-block-combine") ? "last-block"
                                                               : "multi-pass";
  // Warp shuffles need no tree (block_sum ignores it); the others keep one in global or shared
  // memory.
  const std::string tree_storage =
      g.has("warp-shuffle") ? "  unsigned* tree = nullptr;\n"
      : global_tree
          ? "  unsigned* tree = scratch + static_cast<long long>(blockIdx.x) * kThreads;\n"
          : "  __shared__ unsigned shared_tree[kThreads];\n  unsigned* tree = shared_tree;\n";
  const std::string accumulate =
      persistent ? "  for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x)\n"
                   "    sum += tile_sum(in, n, tile, aligned);\n"
                 : "  sum = tile_sum(in, n, blockIdx.x, aligned);\n";
  std::string finish;
  if (completion == "multi-pass") {
    finish = "  if (threadIdx.x == 0) dst[blockIdx.x] = total;  // one partial per block\n";
  } else if (completion == "atomic") {
    finish = "  if (threadIdx.x == 0) atomicAdd(out, total);  // out zeroed before the launch\n";
  } else {
    finish =
        R"(  // The last block to finish (an atomic ticket) sums every block's partial in block order.
  __shared__ bool last;
  if (threadIdx.x == 0) {
    dst[blockIdx.x] = total;
    __threadfence();
    last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  unsigned s = 0;
  for (long long i = threadIdx.x; i < gridDim.x; i += blockDim.x) s += __ldcg(dst + i);
  s = block_sum(s, tree);
  if (threadIdx.x == 0) {
    *out = s;
    *ticket = 0;  // ready for the next call
  }
)";
  }
  std::string host_launch;
  if (completion == "multi-pass") {
    host_launch = R"(  // Passes until one value is left: each leaves one partial per block.
  const unsigned* src = in;
  long long count = n;
  for (int which = 0;; which ^= 1) {
    const long long pass_tiles = (count + kTile - 1) / kTile;
    const long long pass_blocks = grid_of(pass_tiles);
    unsigned* dst = pass_blocks == 1 ? out : partials[which];
    KILN_LAUNCH(reduce_pass, static_cast<unsigned>(pass_blocks), kThreads, 0, stream, src, count,
                pass_tiles, dst, out, scratch, ticket, is_aligned(src));
    if (pass_blocks == 1) break;
    src = dst;
    count = pass_blocks;
  }
)";
  } else if (completion == "atomic") {
    host_launch =
        R"(  if (cudaMemsetAsync(out, 0, sizeof(unsigned), stream) != cudaSuccess) return 1;
  KILN_LAUNCH(reduce_pass, static_cast<unsigned>(blocks), kThreads, 0, stream, in, n, tiles, out,
              out, scratch, ticket, is_aligned(in));
)";
  } else {
    host_launch =
        R"(  KILN_LAUNCH(reduce_pass, static_cast<unsigned>(blocks), kThreads, 0, stream, in, n, tiles,
              partials[0], out, scratch, ticket, is_aligned(in));
)";
  }
  return fmt::format(
      R"(// Generated by kiln evolve for {problem}: the sum of a 1-D {element} array (wrapping in 32 bits,
// exact in any order); do not edit.
// Genome {hash:016x}: {describe}
// kiln-host: begin
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "kiln/candidate.h"
// kiln-host: end
#include "kiln/candidate_split.h"

constexpr int kThreads = {threads};  // threads per block
constexpr int kItems = {items};      // loads per thread per tile
constexpr int kVector = {vector};     // elements per load
constexpr long long kTile = static_cast<long long>(kThreads) * kItems * kVector;
constexpr int kBlocksPerSm = {per_sm};  // persistent grid: resident blocks per SM (0: one block per tile)

// kiln-device: begin
{load}
{block}
// One pass over n values: every block sums its tiles ({mapping}), reduces them to one value
// ({reduction}) and completes by {completion}.
__global__ void __launch_bounds__(kThreads) reduce_pass(const unsigned* __restrict__ in,
                                                        long long n, long long tiles,
                                                        unsigned* dst, unsigned* out,
                                                        unsigned* scratch, unsigned* ticket,
                                                        int aligned) {{
{tree_storage}  unsigned sum = 0;
{accumulate}  const unsigned total = block_sum(sum, tree);
{finish}}}
// kiln-device: end

// kiln-host: begin
static unsigned* partials[2] = {{nullptr, nullptr}};
static unsigned* scratch = nullptr;
static unsigned* ticket = nullptr;
static long long capacity = 0;  // blocks the buffers hold
// Freed when the library is unloaded: a judge server loads candidate after candidate into one
// process, and memory a candidate keeps would stay until the server ends.
__attribute__((destructor)) static void release_buffers() {{
  for (unsigned* p : partials)
    if (p != nullptr) cudaFree(p);
  if (scratch != nullptr) cudaFree(scratch);
  if (ticket != nullptr) cudaFree(ticket);
}}
static int sms = 0;

static long long grid_of(long long tiles) {{
  if (kBlocksPerSm == 0) return tiles;
  const long long resident = static_cast<long long>(sms) * kBlocksPerSm;
  return tiles < resident ? tiles : resident;
}}

static int is_aligned(const void* p) {{ return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }}

// Partials, the global tree scratch and the zeroed ticket for `blocks` blocks (kept between calls).
static bool reserve(long long blocks) {{
  if (blocks <= capacity) return true;
  for (unsigned*& p : partials) {{
    cudaFree(p);
    p = nullptr;
  }}
  cudaFree(scratch);
  scratch = nullptr;
  cudaFree(ticket);
  ticket = nullptr;
  capacity = 0;
  if (cudaMalloc(&partials[0], sizeof(unsigned) * blocks) != cudaSuccess ||
      cudaMalloc(&partials[1], sizeof(unsigned) * blocks) != cudaSuccess ||
      cudaMalloc(&ticket, sizeof(unsigned)) != cudaSuccess ||
      cudaMemset(ticket, 0, sizeof(unsigned)) != cudaSuccess)
    return false;
  if ({global_tree} && cudaMalloc(&scratch, sizeof(unsigned) * kThreads * blocks) != cudaSuccess)
    return false;
  capacity = blocks;
  return true;
}}

extern "C" int kiln_candidate_abi_version(void) {{ return KILN_CANDIDATE_ABI_VERSION; }}

extern "C" int kiln_candidate_run(const KilnCandidateArgs* a) {{
  long long n = 0;
  for (int i = 0; i < a->num_dims; ++i)
    if (std::strcmp(a->dim_names[i], "count") == 0) n = a->dims[i];
  if (n <= 0 || a->num_inputs < 1 || a->num_outputs < 1) return 2;
  if (sms == 0) {{
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
      return 1;
  }}
  cudaStream_t stream = static_cast<cudaStream_t>(a->stream);
  const unsigned* in = static_cast<const unsigned*>(a->inputs[0]);
  unsigned* out = static_cast<unsigned*>(a->outputs[0]);
  const long long tiles = (n + kTile - 1) / kTile;
  const long long blocks = grid_of(tiles);
  if (blocks > 0x7fffffffLL) return 2;
  if (!reserve(blocks)) return 3;
{host_launch}  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}}
// kiln-host: end
)",
      fmt::arg("problem", problem), fmt::arg("element", *element), fmt::arg("hash", g.hash()),
      fmt::arg("describe", g.describe()), fmt::arg("threads", threads), fmt::arg("items", items),
      fmt::arg("vector", vector16 ? 4 : 1), fmt::arg("per_sm", per_sm),
      fmt::arg("load", load_part(vector16)), fmt::arg("block", block_part(g)),
      fmt::arg("mapping",
               persistent ? "a persistent grid striding over the tiles" : "one block per tile"),
      fmt::arg("reduction", g.has("warp-shuffle")       ? "warp shuffles"
                            : g.has("interleaved-tree") ? "an interleaved tree"
                                                        : "a sequential tree"),
      fmt::arg("completion", completion), fmt::arg("tree_storage", tree_storage),
      fmt::arg("accumulate", accumulate), fmt::arg("finish", finish),
      fmt::arg("global_tree", global_tree ? "true" : "false"),
      fmt::arg("host_launch", host_launch));
}

}  // namespace kiln::evolve
