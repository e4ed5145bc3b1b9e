// Loss-family code generation (see loss_generator.hpp). The semantics are the problems'
// (problems/kb1_losses.cpp, kb1_reductions.cpp): Huber's beta 1; KL divergence as
// t * log(t / p) with t = 0 contributing 0, summed and divided by the rows (batchmean); the
// triplet margin loss with margin 1 and pairwise_distance's eps 1e-6 added to each difference;
// hinge's targets broadcast along the rows (element (r, c) uses t[c]); cross entropy as
// logsumexp(row) - row[target]. Ideas: the online softmax normaliser (Milakov and Gimelshein,
// 2018) for cross entropy, the last-block completion of CUDA's threadFenceReduction sample, and
// kiln's hand-written loss kernels (problems/kb1_loss_kernels.cu); the code is generated here.
#include "evolve/loss_generator.hpp"

#include <fmt/format.h>

#include <map>

#include "core/error.hpp"
#include "evolve/source_text.hpp"

namespace kiln::evolve {

std::optional<LossKind> loss_kind_of(const std::string& problem) {
  static const std::map<std::string, LossKind> kinds = {
      {"kb1-94-mse-loss", {"mse", false, false}},
      {"kb1-95-cross-entropy-loss", {"cross-entropy", true, false}},
      {"kb1-96-huber-loss", {"huber", false, false}},
      {"kb1-98-kl-div-loss", {"kl-div", false, false}},
      {"kb1-99-triplet-margin-loss", {"triplet", true, false}},
      {"kb1-100-hinge-loss", {"hinge", false, true}}};
  const auto it = kinds.find(problem);
  if (it == kinds.end()) return std::nullopt;
  return it->second;
}

const StrategySet& loss_generated_strategies(const std::string& problem) {
  static const StrategySet flat = {"scalar-loads",  "vector16-loads",     "row-per-warp",
                                   "row-per-block", "block-tiles",        "shared-tree",
                                   "warp-shuffle",  "last-block-combine", "persistent-grid"};
  // A term per row, or one that needs its column: rows are the unit of work.
  static const StrategySet rows = {"scalar-loads",       "vector16-loads", "row-per-warp",
                                   "row-per-block",      "shared-tree",    "warp-shuffle",
                                   "last-block-combine", "persistent-grid"};
  // Cross entropy takes an exponential per element: fast-exp is its option alone.
  static const StrategySet exponential = [] {
    StrategySet s = rows;
    s.insert("fast-exp");
    return s;
  }();
  // The KL divergence takes a logarithm per element: fast-log is its option alone.
  static const StrategySet logarithm = [] {
    StrategySet s = flat;
    s.insert("fast-log");
    return s;
  }();
  const std::optional<LossKind> kind = loss_kind_of(problem);
  if (!kind) throw UsageError(fmt::format("{}: not a loss problem", problem));
  if (kind->loss == "cross-entropy") return exponential;
  if (kind->loss == "kl-div") return logarithm;
  return kind->per_row || kind->needs_column ? rows : flat;
}

namespace {

struct LossParts {
  int inputs = 2;        // fp32 arrays read per element (95 reads one, plus its targets)
  std::string identity;  // Acc's start
  std::string add;       // one element (x0, x1, x2 and the column j in scope) into acc
  std::string add4;      // a 16-byte vector of input 0 (v, one input only) into acc; else `add` x4
  std::string combine;   // two row statistics (a, b)
  std::string row_term;  // double, from the row's combined statistics `row`, row r
  std::string scale;     // what the sum is multiplied by
};

LossParts parts_of(const LossKind& kind) {
  LossParts p;
  p.identity = "return {0.0f, 0.0f, 0.0f};";
  p.combine = "return {p.s + q.s, p.a + q.a, p.b + q.b};";
  p.row_term = "return 0.0;";
  p.scale = "1.0 / (static_cast<double>(rows) * static_cast<double>(cols))";
  if (kind.loss == "mse") {
    p.add = "const float d = x0 - x1;\n        acc.s += d * d;";
  } else if (kind.loss == "huber") {
    p.add = "const float d = fabsf(x0 - x1);\n        acc.s += d < 1.0f ? 0.5f * d * d : d - 0.5f;";
  } else if (kind.loss == "kl-div") {
    p.add = "acc.s += x1 > 0.0f ? x1 * klog_ratio(x1, x0) : 0.0f;";
    p.scale = "1.0 / static_cast<double>(rows)";
  } else if (kind.loss == "hinge") {
    p.add = "acc.s += fmaxf(1.0f - x0 * x1, 0.0f);";
  } else if (kind.loss == "cross-entropy") {
    p.inputs = 1;
    p.identity = "return {0.0f, -INFINITY, 0.0f};";
    // The running maximum and the sum of exp(x - max), rescaled when the maximum grows; a
    // vector's four at once: one comparison and at most one rescale for the four (the branch and
    // the rescale per element were most of the instructions an element). While the maximum is
    // still -inf (masked logits first) nothing is added: exp(-inf - -inf) would be NaN.
    p.add = R"(if (x0 > acc.a) {
          acc.b = acc.b * kexp(acc.a - x0) + 1.0f;
          acc.a = x0;
        } else if (acc.a != -INFINITY) {
          acc.b += kexp(x0 - acc.a);
        })";
    p.add4 = R"(const float m4 = fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w));
          if (m4 > acc.a) {
            acc.b *= kexp(acc.a - m4);
            acc.a = m4;
          }
          if (acc.a != -INFINITY)
            acc.b += (kexp(v.x - acc.a) + kexp(v.y - acc.a)) + (kexp(v.z - acc.a) + kexp(v.w - acc.a));)";
    p.combine = R"(if (p.a == -INFINITY) return q;
  if (q.a == -INFINITY) return p;
  const float m = fmaxf(p.a, q.a);
  return {p.s + q.s, m, p.b * expf(p.a - m) + q.b * expf(q.a - m)};)";
    p.row_term = R"(const long long t = g.targets[r];
  if (t < 0 || t >= g.cols) return NAN;  // an invalid class poisons the loss, never the memory
  return static_cast<double>(row.a) + log(static_cast<double>(row.b)) -
         static_cast<double>(__ldg(g.in0 + r * g.cols + t));)";
    p.scale = "1.0 / static_cast<double>(rows)";
  } else if (kind.loss == "triplet") {
    p.inputs = 3;
    p.add = R"(const float d1 = x0 - x1 + 1e-6f, d2 = x0 - x2 + 1e-6f;
        acc.a += d1 * d1;
        acc.b += d2 * d2;)";
    p.row_term =
        "return fmax(sqrt(static_cast<double>(row.a)) - sqrt(static_cast<double>(row.b)) + 1.0, "
        "0.0);";
    p.scale = "1.0 / static_cast<double>(rows)";
  }
  return p;
}

// Where input k's element j of the row at `base` lives (hinge's targets: by column).
std::string address_of(int k, const LossKind& kind) {
  if (k == 1 && kind.needs_column) return "g.in1 + j";
  return fmt::format("g.in{} + base + j", k);
}

std::string visit_part(const LossKind& kind, const LossParts& parts) {
  std::string scalar_loads, vector_loads, vector_values;
  for (int k = 0; k < 3; ++k) {
    if (k < parts.inputs) {
      scalar_loads += fmt::format("        const float x{} = __ldg({});\n", k, address_of(k, kind));
      const std::string row =
          k == 1 && kind.needs_column ? "g.in1" : fmt::format("g.in{} + base", k);
      vector_loads += fmt::format(
          "        if (qq < q_end) v{}[u] = __ldg(reinterpret_cast<const float4*>({}) + qq);\n", k,
          row);
      vector_values += fmt::format("          const float x{0} = (&v{0}[u].x)[i];\n", k);
    } else {
      scalar_loads += fmt::format("        const float x{} = 0.0f;\n", k);
      vector_values += fmt::format("          const float x{} = 0.0f;\n", k);
    }
  }
  std::string declare;
  for (int k = 0; k < parts.inputs; ++k) declare += fmt::format("      float4 v{}[kUnroll];\n", k);
  std::string part =
      R"(// This thread's elements of [base + lo, base + hi): lanes `lane` of a team of kTeam. With
// 16-byte loads lo is a multiple of 4 and every input's row starts 16-byte aligned.
template <bool kVectors>
__device__ __forceinline__ void visit(const Args& g, long long base, long long lo, long long hi, int lane,
                                      Acc& acc) {
  (void)base;
  if (kVectors) {
    const long long q_end = hi / 4;
    for (long long q = lo / 4 + lane; q < q_end; q += static_cast<long long>(kTeam) * kUnroll) {
$DECLARE#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const long long qq = q + static_cast<long long>(u) * kTeam;
$VECTOR_LOADS      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const long long qq = q + static_cast<long long>(u) * kTeam;
        if (qq >= q_end) continue;
$VECTOR_ADD
      }
    }
    for (long long j = q_end * 4 + lane; j < hi; j += kTeam) {
$SCALAR_LOADS      $ADD
    }
  } else {
    for (long long j0 = lo + lane; j0 < hi; j0 += static_cast<long long>(kTeam) * kUnroll) {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const long long j = j0 + static_cast<long long>(u) * kTeam;
        if (j >= hi) continue;
$SCALAR_LOADS        $ADD
      }
    }
  }
}
)";
  replace_all(part, "$DECLARE", declare);
  replace_all(part, "$VECTOR_LOADS", vector_loads);
  // A vector's four values: the loss's own update of four (add4), else its element update each.
  const std::string element_wise = fmt::format(R"(#pragma unroll
        for (int i = 0; i < 4; ++i) {{
          const long long j = qq * 4 + i;
          (void)j;
{}          {}
        }})",
                                               vector_values, parts.add);
  const std::string vector_add =
      parts.add4.empty()
          ? element_wise
          : "        {\n          const float4 v = v0[u];\n          " + parts.add4 + "\n        }";
  replace_all(part, "$VECTOR_ADD", vector_add);
  replace_all(part, "$SCALAR_LOADS", scalar_loads);
  replace_all(part, "$ADD", parts.add);
  return part;
}

// The block's combine of a value per thread (every thread gets the total), in a fixed order.
std::string block_reduce_part(bool shuffle) {
  if (shuffle)
    return R"(// --- Block combine: warp shuffles, warp results through shared memory ---
template <class T, class C>
__device__ T block_reduce(T v, C combine, T identity) {
  constexpr int kWarps = kThreads / 32;
  __shared__ T warps[kWarps];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int by = 16; by > 0; by /= 2) v = combine(v, shfl_down(v, by));
  __syncthreads();  // the previous call's readers are done with warps[]
  if (lane == 0) warps[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kWarps ? warps[lane] : identity;
    for (int by = 16; by > 0; by /= 2) v = combine(v, shfl_down(v, by));
    if (lane == 0) warps[0] = v;
  }
  __syncthreads();
  return warps[0];
}
)";
  return R"(// --- Block combine: a tree in shared memory, sequential addressing ---
template <class T, class C>
__device__ T block_reduce(T v, C combine, T identity) {
  (void)identity;
  __shared__ T tree[kThreads];
  __syncthreads();  // the previous call's readers are done with tree[]
  tree[threadIdx.x] = v;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) tree[threadIdx.x] = combine(tree[threadIdx.x], tree[threadIdx.x + half]);
    __syncthreads();
  }
  return tree[0];
}
)";
}

constexpr const char* kSource =
    R"(// Generated by kiln evolve for $PROBLEM ($LOSS loss); do not edit.
// Genome $HASH: $DESCRIBE
// Work mapping: $MAPPING; block partials combined by $COMPLETION.
// kiln-host: begin
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "kiln/candidate.h"
// kiln-host: end
#include "kiln/candidate_split.h"

constexpr int kThreads = $THREADS;
constexpr int kTeam = $TEAM;            // threads on one row (or one tile)
constexpr int kTeamsPerBlock = kThreads / kTeam;
constexpr bool kTiles = $TILES;         // tiles of the flat array instead of rows
constexpr int kUnroll = $UNROLL;        // loads in flight per thread and step
constexpr bool kVectorPath = $VECTOR;   // 16-byte loads where rows allow
constexpr long long kTile = static_cast<long long>(kThreads) * kUnroll * (kVectorPath ? 4 : 1);
constexpr int kBlocksPerSm = $BLOCKS_PER_SM;  // persistent grid: blocks per SM (0: one-shot)
constexpr bool kLastBlock = $LAST_BLOCK;      // the last block adds the partials (else a kernel)
constexpr bool kPerRow = $PER_ROW;            // a term per row from the row's statistics
constexpr bool kFastExp = $FAST_EXP;          // fast-exp: exp on the special-function unit
constexpr bool kFastLog = $FAST_LOG;          // fast-log: log of a ratio on the special-function unit

struct Args {
  const float *in0, *in1, *in2;
  const long long* targets;
  long long rows, cols;
  double scale;
  bool vectors;
};
// s: a sum of element terms; a, b: a row's statistics.
struct Acc {
  float s, a, b;
};

// kiln-device: begin
__device__ __forceinline__ double shfl_down(double v, int by) { return __shfl_down_sync(0xffffffffu, v, by); }
__device__ __forceinline__ Acc shfl_down(Acc v, int by) {
  return {__shfl_down_sync(0xffffffffu, v.s, by), __shfl_down_sync(0xffffffffu, v.a, by),
          __shfl_down_sync(0xffffffffu, v.b, by)};
}

// --- The loss ---
$KEXP// log(a / b) for the KL divergence's positive a, b: logf of the ratio where the ratio is a normal
// float, else log a - log b (PyTorch's own form, finite where the ratio would overflow or
// underflow: subnormal or huge operands). fast-log: __logf(__fdividef(a, b)) (MUFU.RCP and
// MUFU.LG2 with two multiplies, against an IEEE division and logf; the ratio within about 2^-22
// relative, its logarithm within about 2^-21 absolute near 1) where b is normal and below 2^126
// (__fdividef returns 0 above it) and the ratio normal.
__device__ __forceinline__ float klog_ratio(float a, float b) {
  if constexpr (kFastLog) {
    if (b >= 1.17549435e-38f && b < 8.50705917e37f) {
      const float r = __fdividef(a, b);
      if (r >= 1.17549435e-38f && r <= 3.40282347e38f) return __logf(r);
    }
  }
  const float r = a / b;
  return r >= 1.17549435e-38f && r <= 3.40282347e38f ? logf(r) : logf(a) - logf(b);
}
__device__ __forceinline__ Acc acc_identity() { $IDENTITY }
__device__ __forceinline__ Acc acc_combine(Acc p, Acc q) {
  $COMBINE
}
__device__ __forceinline__ double row_term(const Args& g, long long r, Acc row) {
  (void)g;
  (void)r;
  (void)row;
  $ROW_TERM
}

$VISIT
$BLOCK_REDUCE
// A team's combine of its row statistics: shuffles in a warp, the block's combine for a block.
__device__ __forceinline__ Acc team_combine(Acc v) {
  auto combine = [](Acc p, Acc q) { return acc_combine(p, q); };
  if constexpr (kTeam == 32) {
    for (int by = 16; by > 0; by /= 2) v = combine(v, shfl_down(v, by));
    return v;
  } else {
    return block_reduce(v, combine, acc_identity());
  }
}

// Thread t adds partials t, t + kThreads, ... in order; the block's combine adds those.
__device__ double sum_partials(const double* partials, long long count) {
  double sum = 0.0;
  for (long long i = threadIdx.x; i < count; i += kThreads) sum += __ldcg(partials + i);
  return block_reduce(sum, [](double p, double q) { return p + q; }, 0.0);
}

__global__ void __launch_bounds__(kThreads) loss_kernel(Args g, double* partials, unsigned* ticket, float* out) {
  const int team = threadIdx.x / kTeam, lane = threadIdx.x % kTeam;
  double total = 0.0;  // element sums, or the row terms this team leader added
  if constexpr (kTiles) {
    const long long n = g.rows * g.cols, tiles = (n + kTile - 1) / kTile;
    for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      Acc acc = acc_identity();
      const long long lo = tile * kTile, hi = lo + kTile < n ? lo + kTile : n;
      if (g.vectors)
        visit<kVectorPath>(g, 0, lo, hi, lane, acc);
      else
        visit<false>(g, 0, lo, hi, lane, acc);
      total += acc.s;  // fp32 within a tile, double across tiles
    }
  } else {
    for (long long r = static_cast<long long>(blockIdx.x) * kTeamsPerBlock + team; r < g.rows;
         r += static_cast<long long>(gridDim.x) * kTeamsPerBlock) {
      Acc acc = acc_identity();
      if (g.vectors)
        visit<kVectorPath>(g, r * g.cols, 0, g.cols, lane, acc);
      else
        visit<false>(g, r * g.cols, 0, g.cols, lane, acc);
      if constexpr (kPerRow) {
        const Acc row = team_combine(acc);
        if (lane == 0) total += row_term(g, r, row);
      } else {
        total += acc.s;  // fp32 within a row, double across rows
      }
    }
  }
  const double block_total = block_reduce(total, [](double p, double q) { return p + q; }, 0.0);
  if constexpr (kLastBlock) {
    __shared__ bool last;
    if (threadIdx.x == 0) {
      partials[blockIdx.x] = block_total;
      __threadfence();  // the partial is visible before the ticket says so
      last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (last) {
      __threadfence();
      const double sum = sum_partials(partials, gridDim.x);
      if (threadIdx.x == 0) {
        *out = static_cast<float>(sum * g.scale);
        *ticket = 0;  // ready for the next call (kernels on one stream do not overlap)
      }
    }
  } else {
    if (threadIdx.x == 0) partials[blockIdx.x] = block_total;
  }
}

__global__ void __launch_bounds__(kThreads) finish_kernel(const double* partials, long long count, double scale,
                                                          float* out) {
  const double sum = sum_partials(partials, count);
  if (threadIdx.x == 0) *out = static_cast<float>(sum * scale);
}
// kiln-device: end

// kiln-host: begin
static double* partials = nullptr;
static unsigned* ticket = nullptr;
static long long capacity = 0;
// Freed when the library is unloaded: a judge server loads candidate after candidate into one
// process, and memory a candidate keeps would stay until the server ends.
__attribute__((destructor)) static void release_partials() {
  if (partials != nullptr) cudaFree(partials);
  if (ticket != nullptr) cudaFree(ticket);
}
static int sms = 0;

static bool reserve(long long blocks) {
  if (blocks <= capacity) return true;
  cudaFree(partials);
  cudaFree(ticket);
  partials = nullptr;
  ticket = nullptr;
  capacity = 0;
  if (cudaMalloc(&partials, sizeof(double) * blocks) != cudaSuccess ||
      cudaMalloc(&ticket, sizeof(unsigned)) != cudaSuccess ||
      cudaMemset(ticket, 0, sizeof(unsigned)) != cudaSuccess)
    return false;
  capacity = blocks;
  return true;
}

static bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

extern "C" int kiln_candidate_abi_version(void) { return KILN_CANDIDATE_ABI_VERSION; }

extern "C" int kiln_candidate_run(const KilnCandidateArgs* a) {
  long long rows = 0, cols = 0;
  for (int i = 0; i < a->num_dims; ++i) {
    if (std::strcmp(a->dim_names[i], "rows") == 0) rows = a->dims[i];
    if (std::strcmp(a->dim_names[i], "cols") == 0 || std::strcmp(a->dim_names[i], "classes") == 0)
      cols = a->dims[i];
  }
  if (rows <= 0 || cols <= 0 || a->num_inputs < $NUM_INPUTS || a->num_outputs < 1 ||
      a->output_bytes[0] < sizeof(float))
    return 2;
  const unsigned long long matrix = static_cast<unsigned long long>(rows * cols) * sizeof(float);
$INPUT_CHECKS  if (sms == 0) {
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
      return 1;
  }
  Args g{};
$ARGS  g.rows = rows;
  g.cols = cols;
  g.scale = $SCALE;
  g.vectors = kVectorPath && cols % 4 == 0 && aligned16(g.in0) && (g.in1 == nullptr || aligned16(g.in1)) &&
              (g.in2 == nullptr || aligned16(g.in2));
  const long long units = kTiles ? (rows * cols + kTile - 1) / kTile : (rows + kTeamsPerBlock - 1) / kTeamsPerBlock;
  long long blocks = units;
  if (kBlocksPerSm > 0 && blocks > static_cast<long long>(sms) * kBlocksPerSm)
    blocks = static_cast<long long>(sms) * kBlocksPerSm;
  if (blocks > 2147483647LL) return 4;
  if (!reserve(blocks)) return 3;
  float* out = static_cast<float*>(a->outputs[0]);
  cudaStream_t stream = static_cast<cudaStream_t>(a->stream);
  KILN_LAUNCH(loss_kernel, static_cast<unsigned>(blocks), kThreads, 0, stream, g, partials, ticket, out);
  if (!kLastBlock) KILN_LAUNCH(finish_kernel, 1, kThreads, 0, stream, partials, blocks, g.scale, out);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
// kiln-host: end
)";

}  // namespace

std::string generate_loss_candidate(const Genome& g, const std::string& problem) {
  const std::optional<LossKind> kind = loss_kind_of(problem);
  if (!kind) throw UsageError(fmt::format("{}: not a loss problem", problem));
  require_translatable(g, Family::kReduceAxis, loss_generated_strategies(problem), "loss");
  const LossParts parts = parts_of(*kind);
  const bool vector = g.has("vector16-loads");
  const int unroll = vector ? g.knob("vector16-loads", "unroll") : g.knob("scalar-loads", "unroll");
  const bool tiles = g.has("block-tiles");
  const bool per_warp = g.has("row-per-warp");
  const int threads = tiles      ? g.knob("block-tiles", "threads")
                      : per_warp ? 32 * g.knob("row-per-warp", "warps_per_block")
                                 : g.knob("row-per-block", "threads");
  const int team = per_warp ? 32 : threads;
  const int blocks_per_sm =
      g.has("persistent-grid") ? g.knob("persistent-grid", "blocks_per_sm") : 0;
  // The inputs: 95 reads its logits and int64 targets; hinge's targets are one per column.
  std::string args, checks;
  if (kind->loss == "cross-entropy") {
    args =
        "  g.in0 = static_cast<const float*>(a->inputs[0]);\n"
        "  g.targets = static_cast<const long long*>(a->inputs[1]);\n";
    checks =
        "  if (a->num_inputs < 2 || a->input_bytes[0] != matrix ||\n"
        "      a->input_bytes[1] != static_cast<unsigned long long>(rows) * sizeof(long long))\n"
        "    return 2;\n";
  } else {
    for (int k = 0; k < parts.inputs; ++k)
      args += fmt::format("  g.in{0} = static_cast<const float*>(a->inputs[{0}]);\n", k);
    checks = "  if (a->input_bytes[0] != matrix) return 2;\n";
    for (int k = 1; k < parts.inputs; ++k)
      checks +=
          k == 1 && kind->needs_column
              ? "  if (a->input_bytes[1] != static_cast<unsigned long long>(cols) * sizeof(float)) "
                "return 2;\n"
              : fmt::format("  if (a->input_bytes[{}] != matrix) return 2;\n", k);
  }
  std::string source = kSource;
  replace_all(source, "$KEXP", kExpDeviceText);
  replace_all(source, "$VISIT", visit_part(*kind, parts));
  replace_all(source, "$BLOCK_REDUCE", block_reduce_part(g.has("warp-shuffle")));
  replace_all(source, "$IDENTITY", parts.identity);
  replace_all(source, "$COMBINE", parts.combine);
  replace_all(source, "$ROW_TERM", parts.row_term);
  replace_all(source, "$INPUT_CHECKS", checks);
  replace_all(source, "$ARGS", args);
  replace_all(source, "$SCALE", parts.scale);
  replace_all(source, "$NUM_INPUTS",
              std::to_string(kind->loss == "cross-entropy" ? 2 : parts.inputs));
  replace_all(source, "$PROBLEM", problem);
  replace_all(source, "$LOSS", kind->loss);
  replace_all(source, "$HASH", fmt::format("{:016x}", g.hash()));
  replace_all(source, "$DESCRIBE", g.describe());
  replace_all(source, "$MAPPING",
              tiles      ? fmt::format("tiles of {} threads over the flat array", threads)
              : per_warp ? fmt::format("a warp per row, {} per block", threads / 32)
                         : fmt::format("a block of {} threads per row", threads));
  replace_all(source, "$COMPLETION",
              g.has("last-block-combine") ? "the last block" : "a second kernel");
  replace_all(source, "$THREADS", std::to_string(threads));
  replace_all(source, "$TEAM", std::to_string(team));
  replace_all(source, "$TILES", tiles ? "true" : "false");
  replace_all(source, "$UNROLL", std::to_string(unroll));
  replace_all(source, "$VECTOR", vector ? "true" : "false");
  replace_all(source, "$BLOCKS_PER_SM", std::to_string(blocks_per_sm));
  replace_all(source, "$LAST_BLOCK", g.has("last-block-combine") ? "true" : "false");
  replace_all(source, "$PER_ROW", kind->per_row ? "true" : "false");
  replace_all(source, "$FAST_EXP", g.has("fast-exp") ? "true" : "false");
  replace_all(source, "$FAST_LOG", g.has("fast-log") ? "true" : "false");
  return source;
}

}  // namespace kiln::evolve
