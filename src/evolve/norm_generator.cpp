// Normalisation-family code generation (see norm_generator.hpp). The semantics are the problems'
// (problems/kb1_norms.cpp): eps 1e-5 for RMSNorm and the standardising norms, biased variance,
// weight 1 and bias 0; L1 divides by mean |x|, L2 and Frobenius by the square root of the sum of
// squares. Ideas: the online softmax (Milakov and Gimelshein, "Online normalizer calculation for
// softmax", 2018), Welford's one-pass variance with Chan, Golub and LeVeque's pairwise combine,
// split reductions combined in a fixed order as in kiln's hand-written kernels, and Hopper's
// distributed shared memory for the cluster variant (CUDA C++ Programming Guide, thread block
// clusters). The generated source is assembled from parts: the statistic, the block's combine, the
// load path and the work mapping each contribute a piece.
#include "evolve/norm_generator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/error.hpp"
#include "evolve/source_text.hpp"

namespace kiln::evolve {

std::optional<NormKind> norm_kind_of(const std::string& problem) {
  static const std::map<std::string, NormKind> kinds = {
      {"kb1-23-softmax", {"softmax", "rows", false, true}},
      {"kb1-24-log-softmax", {"log-softmax", "rows", false, true}},
      {"kb1-33-batchnorm", {"standardize", "channels-outer", false, true}},
      {"kb1-34-instancenorm", {"standardize", "instance", false, true}},
      {"kb1-35-groupnorm", {"standardize", "group", false, true}},
      {"kb1-36-rmsnorm", {"rms", "channels-strided", true, false}},
      {"kb1-37-frobenius-norm", {"l2", "whole", false, false}},
      {"kb1-38-l1-norm", {"l1", "rows", false, false}},
      {"kb1-39-l2-norm", {"l2", "rows", false, false}},
      {"kb1-40-layernorm", {"standardize", "sample", false, true}}};
  const auto it = kinds.find(problem);
  if (it == kinds.end()) return std::nullopt;
  return it->second;
}

const StrategySet& norm_generated_strategies(const std::string& problem) {
  static const StrategySet two_statistics = {
      "scalar-loads",   "vector16-loads",    "row-per-block", "split-row",      "cluster-split-row",
      "grid-split-row", "shared-tree",       "warp-shuffle",  "two-pass",       "online-one-pass",
      "keep-on-chip",   "cp-async-pipeline", "tma-bulk",      "cache-streaming"};
  static const StrategySet one_statistic = {
      "scalar-loads",      "vector16-loads",    "row-per-block", "split-row",
      "cluster-split-row", "grid-split-row",    "shared-tree",   "warp-shuffle",
      "keep-on-chip",      "cp-async-pipeline", "tma-bulk",      "cache-streaming"};
  // softmax and log-softmax: the statistics (and softmax's map) take exponentials.
  static const StrategySet exponential = [] {
    StrategySet set = two_statistics;
    set.insert("fast-exp");
    return set;
  }();
  // A thread per column: no block combine (the one reduction member only fills the group).
  static const StrategySet strided = {"scalar-loads", "vector16-loads", "row-per-block",
                                      "warp-shuffle", "keep-on-chip"};
  const std::optional<NormKind> kind = norm_kind_of(problem);
  if (!kind) throw UsageError(fmt::format("{}: not a normalisation problem", problem));
  if (kind->strided) return strided;
  if (kind->op == "softmax" || kind->op == "log-softmax") return exponential;
  return kind->two_statistics ? two_statistics : one_statistic;
}

namespace {

// --- The statistic: identity, per-element add, combine, what a pass hands the next one, the
// factors and the map. `passes` is 1 (one read for the statistics) or 2.
std::string statistic_part(const NormKind& kind, int passes) {
  const std::string& op = kind.op;
  std::string add, combine, identity, after, finish, map;
  // A 16-byte vector's four values at once where that saves work (empty: `add` four times).
  std::string group;
  if (op == "softmax" || op == "log-softmax") {
    if (passes == 1) {
      identity = "return {-INFINITY, 0.0f};";
      // The running maximum and the sum of exp(x - max), rescaled when the maximum grows; while
      // the maximum is still -inf nothing is added (exp(-inf - -inf) would be NaN).
      add = R"(if (x > s.a) {
    s.b = s.b * kexp(s.a - x) + 1.0f;
    s.a = x;
  } else if (s.a != -INFINITY) {
    s.b += kexp(x - s.a);
  })";
      // Four at once: one comparison and at most one rescale (cross entropy's kernel ran 13%
      // faster so, 2026-11-30d).
      group = R"(const float m4 = fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w));
  if (m4 > s.a) {
    s.b *= kexp(s.a - m4);
    s.a = m4;
  }
  if (s.a != -INFINITY)
    s.b += (kexp(v.x - s.a) + kexp(v.y - s.a)) + (kexp(v.z - s.a) + kexp(v.w - s.a));)";
      combine = R"(if (p.a == -INFINITY) return q;
  if (q.a == -INFINITY) return p;
  const float m = fmaxf(p.a, q.a);
  return {m, p.b * kexp(p.a - m) + q.b * kexp(q.a - m)};)";
      after = "return t.a;";
      finish = "const double m = t[0].a, sum = t[0].b;";
    } else {
      identity = "return {pass == 0 ? -INFINITY : 0.0f, 0.0f};";
      add = R"(if (pass == 0)
    s.a = fmaxf(s.a, x);
  else
    s.b += kexp(x - c.prev);)";
      combine = "return pass == 0 ? Stat{fmaxf(p.a, q.a), 0.0f} : Stat{0.0f, p.b + q.b};";
      after = "return t.a;";
      finish = "const double m = t[0].a, sum = t[1].b;";
    }
    if (op == "softmax") {
      finish += "\n  return {static_cast<float>(m), static_cast<float>(1.0 / sum)};";
      map = "return kexp(x - f.f0) * f.f1;";
    } else {
      finish += "\n  return {static_cast<float>(m + log(sum)), 0.0f};";
      map = "return x - f.f0;";
    }
  } else if (op == "standardize") {
    identity = "return {0.0f, 0.0f, 0.0f};";
    if (passes == 1) {
      // Welford's running mean and sum of squared deviations per thread, Chan et al.'s pairwise
      // combine across threads: no cancellation however far the values sit from zero.
      add = R"(s.n += 1.0f;
  const float d = x - s.a;
  s.a += __fdividef(d, s.n);
  s.b += d * (x - s.a);)";
      // Four at once: their own mean and squared deviations, merged by Chan et al.'s combine
      // (one division for four instead of four). Scaled before they are added, and the merge
      // term (d w)(d n) exactly 0 on a thread's first four: no overflow to inf * 0 for values
      // near the float range's end.
      group = R"(const float m4 = (v.x * 0.25f + v.y * 0.25f) + (v.z * 0.25f + v.w * 0.25f);
  const float dx = v.x - m4, dy = v.y - m4, dz = v.z - m4, dw = v.w - m4;
  const float n = s.n + 4.0f, d = m4 - s.a, w = __fdividef(4.0f, n);
  s.b += ((dx * dx + dy * dy) + (dz * dz + dw * dw)) + (d * w) * (d * s.n);
  s.a += d * w;
  s.n = n;)";
      combine = R"(if (p.n == 0.0f) return q;
  if (q.n == 0.0f) return p;
  const float n = p.n + q.n, d = q.a - p.a;
  return {p.a + d * (q.n / n), p.b + q.b + d * d * (p.n / n) * q.n, n};)";
      after = "return 0.0f;";
      finish = "const double mean = t[0].a, var = t[0].b / n;";
    } else {
      combine = "return {p.a + q.a, p.b + q.b, 0.0f};";
      add = R"(if (pass == 0) {
    s.a += x;
  } else {
    const float d = x - c.prev;
    s.b += d * d;
  })";
      // The mean pass 1 centred on, as pass 1 saw it.
      after = "return static_cast<float>(t.a / n);";
      finish = "const double mean = c.prev, var = t[1].b / n;";
    }
    finish +=
        "\n  return {static_cast<float>(mean), "
        "static_cast<float>(1.0 / sqrt((var > 0.0 ? var : 0.0) + kEps))};";
    map = "return (x - f.f0) * f.f1;";
  } else {
    identity = "return {0.0f, 0.0f};";
    combine = "return {p.a + q.a, 0.0f};";
    after = "return 0.0f;";
    add = op == "l1" ? "s.a += fabsf(x);" : "s.a += x * x;";
    if (op == "l1") finish = "return {static_cast<float>(n / t[0].a), 0.0f};";
    if (op == "l2") finish = "return {static_cast<float>(1.0 / sqrt(t[0].a)), 0.0f};";
    if (op == "rms") finish = "return {static_cast<float>(1.0 / sqrt(t[0].a / n + kEps)), 0.0f};";
    map = "return x * f.f0;";
  }
  std::string part = R"(// --- The statistic ($OP, $PASSES pass(es) over the data) ---
$KEXP__device__ __forceinline__ Stat identity(int pass) {
  (void)pass;
  $IDENTITY
}
__device__ __forceinline__ void add(Stat& s, float x, int pass, const Context& c) {
  (void)pass;
  (void)c;
  $ADD
}
// A 16-byte vector's four values.
__device__ __forceinline__ void add(Stat& s, float4 v, int pass, const Context& c) {
  (void)pass;
  (void)c;
  $GROUP_UPDATE
}
// A pass's update of this thread's statistic by one value or four (the load paths hand it either;
// a class, not a generic lambda, which NVRTC would take for a host function).
struct Adder {
  Stat& s;
  int pass;
  const Context& c;
  __device__ __forceinline__ void operator()(float x) const { add(s, x, pass, c); }
  __device__ __forceinline__ void operator()(float4 v) const { add(s, v, pass, c); }
};
__device__ __forceinline__ Stat combine(Stat p, Stat q, int pass) {
  (void)pass;
  $COMBINE
}
// What pass `pass`'s total hands the next pass (the maximum, or the mean).
__device__ __forceinline__ float after_pass(Stat t, int pass, double n) {
  (void)pass;
  (void)n;
  $AFTER
}
// The map's two factors from every pass's total over n elements.
__device__ __forceinline__ Factors finish(const Stat* t, double n, const Context& c) {
  (void)n;
  (void)c;
  $FINISH
}
__device__ __forceinline__ float map_one(float x, Factors f) { $MAP }
)";
  replace_all(part, "$KEXP", kExpDeviceText);
  replace_all(part, "$OP", op);
  replace_all(part, "$PASSES", std::to_string(passes));
  replace_all(part, "$IDENTITY", identity);
  replace_all(part, "$GROUP_UPDATE",
              group.empty() ? "add(s, v.x, pass, c);\n  add(s, v.y, pass, c);\n  add(s, v.z, pass, "
                              "c);\n  add(s, v.w, pass, c);"
                            : group);
  replace_all(part, "$ADD", add);
  replace_all(part, "$COMBINE", combine);
  replace_all(part, "$AFTER", after);
  replace_all(part, "$FINISH", finish);
  replace_all(part, "$MAP", map);
  return part;
}

// --- The block's combine: every thread gets the block's total, partials in a fixed order.
std::string block_combine_part(bool shuffle) {
  if (shuffle)
    return R"(// --- Block combine: warp shuffles, warp totals through shared memory ---
__device__ __forceinline__ Stat shuffle_down(Stat s, int by) {
  return {__shfl_down_sync(0xffffffffu, s.a, by), __shfl_down_sync(0xffffffffu, s.b, by),
          __shfl_down_sync(0xffffffffu, s.n, by)};
}
__device__ Stat block_combine(Stat s, int pass) {
  constexpr int kWarps = kThreads / 32;
  __shared__ Stat warps[kWarps];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int by = 16; by > 0; by /= 2) s = combine(s, shuffle_down(s, by), pass);
  __syncthreads();  // the previous call's readers are done with warps[]
  if (lane == 0) warps[warp] = s;
  __syncthreads();
  if (warp == 0) {
    s = lane < kWarps ? warps[lane] : identity(pass);
    for (int by = 16; by > 0; by /= 2) s = combine(s, shuffle_down(s, by), pass);
    if (lane == 0) warps[0] = s;
  }
  __syncthreads();
  return warps[0];
}
)";
  return R"(// --- Block combine: a tree in shared memory, sequential addressing ---
__device__ Stat block_combine(Stat s, int pass) {
  __shared__ Stat tree[kThreads];
  __syncthreads();  // the previous call's readers are done with tree[]
  tree[threadIdx.x] = s;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) tree[threadIdx.x] = combine(tree[threadIdx.x], tree[threadIdx.x + half], pass);
    __syncthreads();
  }
  return tree[0];
}
)";
}

// --- The load path: visit() hands every element of x[lo, hi) this thread owns to f (filling the
// kept copy when asked); transform() writes y[lo, hi) from x or from the kept copy. The kept copy
// of a unit starts at its first element rounded down to 16 bytes (sbase), so its float4 slots line
// up with x's.
std::string load_part(bool vector) {
  // cache-streaming: the last read of x (the map's, or the one that fills the kept copy) and the
  // stores to y are marked evict-first (ld.global.cs, st.global.cs), so L2 keeps the parts of x
  // that later passes read again.
  const std::string common = R"(template <bool kFromKept, bool kLastRead = false>
__device__ __forceinline__ float load1(const float* __restrict__ x, const float* kept, long long sbase, long long j) {
  if (kFromKept) return kept[j - sbase];
  if (kStreamHints && kLastRead) return __ldcs(x + j);
  return __ldg(x + j);
}
__device__ __forceinline__ void store1(float* y, long long j, float v) {
  if (kStreamHints)
    __stcs(y + j, v);
  else
    y[j] = v;
}
)";
  if (vector)
    return common + R"(template <bool kFromKept, bool kLastRead = false>
__device__ __forceinline__ float4 load4(const float* __restrict__ x, const float* kept, long long sbase, long long q) {
  if (kFromKept) return reinterpret_cast<const float4*>(kept)[q - sbase / 4];
  if (kStreamHints && kLastRead) return __ldcs(reinterpret_cast<const float4*>(x) + q);
  return __ldg(reinterpret_cast<const float4*>(x) + q);
}
__device__ __forceinline__ void store4(float* y, long long q, float4 v) {
  if (kStreamHints)
    __stcs(reinterpret_cast<float4*>(y) + q, v);
  else
    reinterpret_cast<float4*>(y)[q] = v;
}
// --- Load path: 16-byte vectors, a scalar head and tail where the range is not aligned ---
// A group is kUnroll vectors a thread (kThreads * kUnroll of the block): whole groups check no
// bounds (kChecked false), the last partial group checks each vector. Per-vector 64-bit bounds
// checks cost about one instruction an element (2026-11-30, the softmax kernel's SASS).
template <bool kChecked, bool kFromKept, bool kFill, class F>
__device__ __forceinline__ void visit_group(const float* __restrict__ x, float* kept, long long sbase, long long q,
                                            long long q_end, F& f) {
  float4 v[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const long long qq = q + static_cast<long long>(u) * kThreads;
    if (!kChecked || qq < q_end) v[u] = load4<kFromKept, kFill>(x, kept, sbase, qq);
  }
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const long long qq = q + static_cast<long long>(u) * kThreads;
    if (!kChecked || qq < q_end) {
      if (kFill) reinterpret_cast<float4*>(kept)[qq - sbase / 4] = v[u];
      f(v[u]);  // the statistic's update of four
    }
  }
}
template <bool kFromKept, bool kFill, class F>
__device__ __forceinline__ void visit(const float* __restrict__ x, float* kept, long long sbase, long long lo,
                                      long long hi, bool aligned, F&& f) {
  const long long head = aligned ? min(hi, (lo + 3) & ~3LL) : hi;
  for (long long j = lo + threadIdx.x; j < head; j += kThreads) {
    const float v = load1<kFromKept, kFill>(x, kept, sbase, j);
    if (kFill) kept[j - sbase] = v;
    f(v);
  }
  constexpr long long kGroup = static_cast<long long>(kThreads) * kUnroll;
  const long long q_begin = head >> 2, q_end = aligned ? max(q_begin, hi >> 2) : q_begin;
  const long long q_full = q_begin + (q_end - q_begin) / kGroup * kGroup;
  for (long long b = q_begin; b < q_full; b += kGroup) visit_group<false, kFromKept, kFill>(x, kept, sbase, b + threadIdx.x, q_end, f);
  if (q_full < q_end) visit_group<true, kFromKept, kFill>(x, kept, sbase, q_full + threadIdx.x, q_end, f);
  for (long long j = max(head, q_end << 2) + threadIdx.x; j < hi; j += kThreads) {
    const float v = load1<kFromKept, kFill>(x, kept, sbase, j);
    if (kFill) kept[j - sbase] = v;
    f(v);
  }
}
template <bool kChecked, bool kFromKept>
__device__ __forceinline__ void transform_group(const float* __restrict__ x, const float* kept, long long sbase,
                                                float* __restrict__ y, long long q, long long q_end, Factors f) {
  float4 v[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const long long qq = q + static_cast<long long>(u) * kThreads;
    if (!kChecked || qq < q_end) v[u] = load4<kFromKept, true>(x, kept, sbase, qq);
  }
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const long long qq = q + static_cast<long long>(u) * kThreads;
    if (!kChecked || qq < q_end)
      store4(y, qq, make_float4(map_one(v[u].x, f), map_one(v[u].y, f), map_one(v[u].z, f), map_one(v[u].w, f)));
  }
}
template <bool kFromKept>
__device__ __forceinline__ void transform(const float* __restrict__ x, const float* kept, long long sbase,
                                          float* __restrict__ y, long long lo, long long hi, bool aligned,
                                          Factors f) {
  const long long head = aligned ? min(hi, (lo + 3) & ~3LL) : hi;
  for (long long j = lo + threadIdx.x; j < head; j += kThreads)
    store1(y, j, map_one(load1<kFromKept, true>(x, kept, sbase, j), f));
  constexpr long long kGroup = static_cast<long long>(kThreads) * kUnroll;
  const long long q_begin = head >> 2, q_end = aligned ? max(q_begin, hi >> 2) : q_begin;
  const long long q_full = q_begin + (q_end - q_begin) / kGroup * kGroup;
  for (long long b = q_begin; b < q_full; b += kGroup) transform_group<false, kFromKept>(x, kept, sbase, y, b + threadIdx.x, q_end, f);
  if (q_full < q_end) transform_group<true, kFromKept>(x, kept, sbase, y, q_full + threadIdx.x, q_end, f);
  for (long long j = max(head, q_end << 2) + threadIdx.x; j < hi; j += kThreads)
    store1(y, j, map_one(load1<kFromKept, true>(x, kept, sbase, j), f));
}
)";
  return common + R"(// --- Load path: one 4-byte load per element, kUnroll in flight per thread ---
template <bool kFromKept, bool kFill, class F>
__device__ __forceinline__ void visit(const float* __restrict__ x, float* kept, long long sbase, long long lo,
                                      long long hi, bool aligned, F&& f) {
  (void)aligned;
  for (long long j = lo + threadIdx.x; j < hi; j += static_cast<long long>(kThreads) * kUnroll) {
    float v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const long long jj = j + static_cast<long long>(u) * kThreads;
      if (jj < hi) v[u] = load1<kFromKept, kFill>(x, kept, sbase, jj);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const long long jj = j + static_cast<long long>(u) * kThreads;
      if (jj < hi) {
        if (kFill) kept[jj - sbase] = v[u];
        f(v[u]);
      }
    }
  }
}
template <bool kFromKept>
__device__ __forceinline__ void transform(const float* __restrict__ x, const float* kept, long long sbase,
                                          float* __restrict__ y, long long lo, long long hi, bool aligned,
                                          Factors f) {
  (void)aligned;
  for (long long j = lo + threadIdx.x; j < hi; j += static_cast<long long>(kThreads) * kUnroll) {
    float v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const long long jj = j + static_cast<long long>(u) * kThreads;
      if (jj < hi) v[u] = load1<kFromKept, true>(x, kept, sbase, jj);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const long long jj = j + static_cast<long long>(u) * kThreads;
      if (jj < hi) store1(y, jj, map_one(v[u], f));
    }
  }
}
)";
}

// --- Segments of contiguous runs: the unit's range and the walk over its runs.
// The host code uses these too: outside the device region.
constexpr const char* kViewPart =
    R"(// A segment: `runs` runs of `run_len` contiguous elements, `run_stride` apart, the first at
// s * seg_stride. Its elements are numbered 0 .. length - 1 run by run.
struct View {
  long long segments, length, seg_stride, runs, run_len, run_stride;
};
// Unit k's share of a segment: [lo, hi) of its elements, in multiples of 4 (float4 lanes).
__device__ __host__ __forceinline__ long long unit_chunk(const View& v) {
  return ((v.length + kParts - 1) / kParts + 3) & ~3LL;
}
)";
constexpr const char* kSegmentPart =
    R"(// f(g0, g1) for each contiguous piece [g0, g1) of x holding elements [lo, hi) of segment s.
template <class F>
__device__ __forceinline__ void for_pieces(const View& v, long long s, long long lo, long long hi, F&& f) {
  long long run = lo / v.run_len;
  for (long long e = lo; e < hi; ++run) {
    const long long run_end = min(hi, (run + 1) * v.run_len);
    const long long g0 = s * v.seg_stride + run * v.run_stride + (e - run * v.run_len);
    f(g0, g0 + (run_end - e));
    e = run_end;
  }
}
// A block's unit of segment s: [g_lo, g_hi) of x (one run where kept) and its kept part
// [g_lo, k_end), stored from sbase (g_lo rounded down to 16 bytes) in shared memory.
struct Unit {
  long long s, lo, hi, g_lo, g_hi, sbase, k_end;
  bool keep;
};
__device__ __forceinline__ Unit unit_of(const View& v, long long s, long long lo, long long hi, long long kept_floats) {
  Unit u{s, lo, hi, s * v.seg_stride + lo, 0, 0, 0, kept_floats > 0};
  u.g_hi = u.g_lo + (hi - lo);
  u.sbase = u.g_lo & ~3LL;
  u.k_end = u.keep ? min(u.g_hi, u.sbase + kept_floats) : u.g_lo;
  return u;
}
// What a statistics pass reads from x: the rest of a kept unit, or all of it, run by run.
template <class F>
__device__ __forceinline__ void visit_rest(const float* __restrict__ x, const View& v, const Unit& u, bool aligned, F&& f) {
  if (u.keep)
    visit<false, false>(x, nullptr, 0, u.k_end, u.g_hi, aligned, f);
  else
    for_pieces(v, u.s, u.lo, u.hi, [&](long long g0, long long g1) { visit<false, false>(x, nullptr, 0, g0, g1, aligned, f); });
}
// The map of a unit: its kept part from `kept`, the rest from x.
__device__ __forceinline__ void map_unit(const float* __restrict__ x, const float* kept, float* __restrict__ y,
                                         const View& v, const Unit& u, bool aligned, Factors f) {
  if (u.keep) {
    transform<true>(x, kept, u.sbase, y, u.g_lo, u.k_end, aligned, f);
    transform<false>(x, kept, 0, y, u.k_end, u.g_hi, aligned, f);
  } else {
    for_pieces(v, u.s, u.lo, u.hi, [&](long long g0, long long g1) { transform<false>(x, kept, 0, y, g0, g1, aligned, f); });
  }
}
)";

// The cp.async helpers of the staged mappings.
constexpr const char* kCopyAsyncPart = R"(
// --- cp-async-pipeline: copies global -> shared memory that land while the block works on
// (grid-split-row: the unit of a round ahead, while this round waits at its group's counter and
// writes; one unit a block: its later chunks, while the first are summed).
__device__ __forceinline__ void copy_async(float* to, const float* from, int bytes) {
  const unsigned shared_to = static_cast<unsigned>(__cvta_generic_to_shared(to));
  if (bytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(shared_to), "l"(from) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(shared_to), "l"(from) : "memory");
}
__device__ __forceinline__ void commit_copies() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void wait_copies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}
// The same with the count known at run time (at most 3 pending: kStages <= 4).
__device__ __forceinline__ void wait_copies_but(int pending) {
  if (pending <= 0)
    wait_copies<0>();
  else if (pending == 1)
    wait_copies<1>();
  else if (pending == 2)
    wait_copies<2>();
  else
    wait_copies<3>();
}
// x[sbase, k_end) into stage (laid out as the kept copy: element j at stage[j - sbase]): whole
// 16-byte chunks where x is 16-byte aligned, 4 bytes at a time for the tail (or everything).
__device__ __forceinline__ void prefetch_unit(const float* __restrict__ x, float* stage, long long sbase,
                                              long long k_end, bool aligned) {
  const long long q_end = aligned ? k_end / 4 : sbase / 4;
  for (long long q = sbase / 4 + threadIdx.x; q < q_end; q += kThreads) copy_async(stage + (q * 4 - sbase), x + q * 4, 16);
  for (long long j = max(sbase, q_end * 4) + threadIdx.x; j < k_end; j += kThreads)
    copy_async(stage + (j - sbase), x + j, 4);
}

)";

// The fused kernel of row-per-block (kParts = 1) and cluster-split-row: statistics, the
// cluster's combine, then the map, in one launch; the unit's range optionally kept on chip.
constexpr const char* kFusedKernel = R"(
// The cluster's barrier and its blocks' shared memory, by the intrinsics cooperative_groups'
// cluster_group wraps (its header alone costs nvcc about 3 s a candidate: 4.7 s against 1.3 s for
// a small source, CUDA 13.0).
__device__ __forceinline__ void cluster_sync() {
  __cluster_barrier_arrive();
  __cluster_barrier_wait();
}
template <class T>
__device__ __forceinline__ T* peer_shared(T* mine, unsigned rank) {
  return static_cast<T*>(__cluster_map_shared_rank(mine, rank));
}
// The cluster's total from each block's partial (slot, in every block's shared memory): the first
// warp reads the kParts slots once (lane r from block r, one round trip over distributed shared
// memory instead of kParts for every thread) and combines them as a fixed tree, so every block
// of the cluster computes the same total, bit for bit; the block gets it through `total`.
__device__ __forceinline__ Stat cluster_total(Stat* slot, int pass) {
  static_assert(!kCluster || kParts <= 32, "one warp reads the cluster's slots");
  __shared__ Stat total;
  if (threadIdx.x < 32) {
    const int lane = static_cast<int>(threadIdx.x);
    Stat t = identity(pass);
    if (lane < kParts) t = *peer_shared(slot, static_cast<unsigned>(lane));
    for (int by = 16; by > 0; by /= 2) {
      const Stat o{__shfl_down_sync(0xffffffffu, t.a, by), __shfl_down_sync(0xffffffffu, t.b, by),
                   __shfl_down_sync(0xffffffffu, t.n, by)};
      if (lane + by < 32) t = combine(t, o, pass);
    }
    if (lane == 0) total = t;
  }
  __syncthreads();
  const Stat result = total;
  __syncthreads();  // every thread has its copy before a later call overwrites it
  return result;
}

// The partial of each cluster block, combined by every block in the same fixed order.
__device__ __forceinline__ Stat parts_combine(Stat mine, int pass) {
  if constexpr (!kCluster) {
    (void)pass;
    return mine;
  } else {
    __shared__ Stat slot[2];
    if (threadIdx.x == 0) slot[pass] = mine;
    cluster_sync();
    return cluster_total(&slot[pass], pass);
  }
}

// keep: the first kept_floats - (g_lo - sbase) elements of the unit's range (one run) live in shared
// memory from the first pass on; the rest is read from x each time.
__global__ void __launch_bounds__(kThreads, kMinBlocks) norm_kernel(const float* __restrict__ x, float* __restrict__ y, View v,
                                                        bool aligned, long long kept_floats) {
  extern __shared__ float4 kept4[];
  float* kept = reinterpret_cast<float*>(kept4);
  const long long s = blockIdx.x / kParts;
  const long long k = blockIdx.x % kParts;  // the block's rank in its cluster
  const long long chunk = unit_chunk(v);
  const long long lo = min(v.length, k * chunk), hi = min(v.length, lo + chunk);
  const Unit u = unit_of(v, s, lo, hi, kept_floats);
  const long long g_lo = u.g_lo, sbase = u.sbase, k_end = u.k_end;
  Context c{0.0f};
  Stat totals[kPasses];
  const double n = static_cast<double>(v.length);
#pragma unroll
  for (int pass = 0; pass < kPasses; ++pass) {
    Stat mine = identity(pass);
    const Adder add_one{mine, pass, c};
    if (u.keep && kStages > 1 && pass == 0) {
      // The kept range staged by cp.async in kStages chunks, all issued up front; each chunk is
      // summed as it lands, the later ones still in flight.
      const long long chunk = ((k_end - sbase + kStages - 1) / kStages + 3) & ~3LL;
      for (int i = 0; i < kStages; ++i) {
        const long long c0 = min(k_end, sbase + i * chunk), c1 = min(k_end, c0 + chunk);
        if (c0 < c1) prefetch_unit(x, kept + (c0 - sbase), c0, c1, aligned);
        commit_copies();
      }
      for (int i = 0; i < kStages; ++i) {
        wait_copies_but(kStages - 1 - i);
        __syncthreads();
        const long long c0 = min(k_end, sbase + i * chunk), c1 = min(k_end, c0 + chunk);
        visit<true, false>(x, kept, sbase, max(g_lo, c0), c1, aligned, add_one);
      }
    } else if (u.keep) {  // the kept part: read from x and kept on the first pass
      if (pass > 0)
        visit<true, false>(x, kept, sbase, g_lo, k_end, aligned, add_one);
      else
        visit<false, true>(x, kept, sbase, g_lo, k_end, aligned, add_one);
    }
    visit_rest(x, v, u, aligned, add_one);
    totals[pass] = parts_combine(block_combine(mine, pass), pass);
    if (pass + 1 < kPasses) c.prev = after_pass(totals[pass], pass, n);
  }
  map_unit(x, kept, y, v, u, aligned, finish(totals, n, c));
  if constexpr (kCluster) cluster_sync();  // peers may still read this block's slots
}
)";

constexpr const char* kTmaKernel = R"(
// tma-bulk (one unit a block, or a cluster's units): a persistent grid of clusters (or blocks),
// each taking segments in rounds. The unit's 16-byte-aligned range is copied global -> shared
// memory by the TMA engine (cp.async.bulk, one thread issues it, an mbarrier counts its bytes),
// kTmaStages rounds ahead, so the next segments land while this one is summed and written: x is
// read from HBM once, and the block never waits for a load it could have issued earlier (with
// kTmaChunks pieces, a piece's refill starts as soon as that piece is mapped). The few
// elements outside the aligned range, and any part beyond a stage, are read from x directly.
// (The bulk copy and the mbarrier's transaction count: PTX ISA, cp.async.bulk and
// mbarrier.expect_tx; CUTLASS's sm90 pipelines use the same pair.)
__device__ __forceinline__ unsigned smem_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void bulk_load(float* to, const float* from, unsigned bytes, unsigned long long* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
          smem_address(to)),
      "l"(from), "r"(bytes), "r"(smem_address(bar))
      : "memory");
}
// tma-bulk's bulk store: shared -> global by the TMA engine, in one bulk group (PTX ISA,
// cp.async.bulk.global.shared::cta; CUTLASS's sm90 TMA-store epilogue uses the same fence, barrier,
// one-thread issue and wait_group.read before the buffer is reused).
__device__ __forceinline__ void bulk_store(float* to, const float* from, unsigned bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(to), "r"(smem_address(from)),
               "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// The stage has been read out by every committed bulk store (it may be refilled).
__device__ __forceinline__ void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }
// All but the most recent committed bulk store have read their stage out.
__device__ __forceinline__ void bulk_wait_read_but_last() {
  asm volatile("cp.async.bulk.wait_group.read 1;\n" ::: "memory");
}
// Every committed bulk store is complete (before the block exits).
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
__device__ __forceinline__ void expect_bytes(unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_address(bar)), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void wait_phase(unsigned long long* bar, unsigned parity) {
  asm volatile(
      "{\n .reg .pred done;\n"
      "wait_%=:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      " @!done bra wait_%=;\n}\n" ::"r"(smem_address(bar)),
      "r"(parity)
      : "memory");
}
// The part of segment s's unit k that a stage holds: [a0, k_end), a0 the unit's start rounded up
// to 16 bytes; the unit's range is [g_lo, g_hi).
struct TmaUnit {
  long long g_lo, g_hi, a0, k_end;
};
__device__ __forceinline__ TmaUnit tma_unit(const View& v, long long s, long long k, long long stage_floats) {
  const long long chunk = unit_chunk(v);
  const long long lo = min(v.length, k * chunk), hi = min(v.length, lo + chunk);
  TmaUnit u{s * v.seg_stride + lo, s * v.seg_stride + hi, 0, 0};
  u.a0 = min(u.g_hi, (u.g_lo + 3) & ~3LL);
  u.k_end = max(u.a0, min(u.g_hi & ~3LL, u.a0 + stage_floats));
  return u;
}
// tma-bulk chunks: a stage is kTmaChunks pieces of chunk_floats (whole 16-byte vectors) at fixed
// places, each with its own mbarrier, so that a piece can be refilled with the next unit's as soon
// as it is mapped, and summed as soon as it lands. Piece c of unit u: [lo, hi) of the stage.
__device__ __forceinline__ long long chunk_lo(const TmaUnit& u, int c, long long chunk_floats) {
  return min(u.k_end - u.a0, static_cast<long long>(c) * chunk_floats);
}
__device__ __forceinline__ long long chunk_hi(const TmaUnit& u, int c, long long chunk_floats) {
  return min(u.k_end - u.a0, static_cast<long long>(c + 1) * chunk_floats);
}
// One thread: piece c of unit u into the stage, in bulk copies of at most 64 KiB, counted by bar
// (an empty piece still arrives, so every piece's barrier changes phase once a round).
__device__ __forceinline__ void issue_chunk(const float* x, float* stage, const TmaUnit& u, int c,
                                            long long chunk_floats, unsigned long long* bar) {
  const long long lo = chunk_lo(u, c, chunk_floats);
  const unsigned long long bytes = static_cast<unsigned long long>(chunk_hi(u, c, chunk_floats) - lo) * 4ULL;
  expect_bytes(bar, static_cast<unsigned>(bytes));
  for (unsigned long long at = 0; at < bytes; at += 65536ULL) {
    const unsigned piece = static_cast<unsigned>(bytes - at < 65536ULL ? bytes - at : 65536ULL);
    bulk_load(stage + lo + at / 4, x + u.a0 + lo + at / 4, piece, bar);
  }
}
// The cluster's combine of a round: slots alternate by round parity, so a block that runs ahead
// into the next round never overwrites a slot a slower peer has still to read (it cannot pass the
// next round's barrier before that peer has read this one's).
__device__ __forceinline__ Stat tma_parts_combine(Stat mine, int pass, long long round) {
  if constexpr (!kCluster) {
    (void)pass;
    (void)round;
    return mine;
  } else {
    __shared__ Stat slot[2][2];
    if (threadIdx.x == 0) slot[round & 1][pass] = mine;
    cluster_sync();
    return cluster_total(&slot[round & 1][pass], pass);
  }
}

__global__ void __launch_bounds__(kThreads) tma_norm_kernel(const float* __restrict__ x, float* __restrict__ y, View v,
                                                            long long stage_floats) {
  extern __shared__ float4 stages4[];
  float* stages = reinterpret_cast<float*>(stages4);
  __shared__ __align__(8) unsigned long long full[kTmaStages * kTmaChunks];
  const long long groups = gridDim.x / kParts;
  const long long group = blockIdx.x / kParts;
  const long long k = blockIdx.x % kParts;  // the block's unit in each segment (its cluster rank)
  const long long chunk_floats = ((stage_floats + kTmaChunks - 1) / kTmaChunks + 3) & ~3LL;
  if (threadIdx.x == 0) {
    for (int i = 0; i < kTmaStages * kTmaChunks; ++i)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem_address(&full[i])) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");  // visible to the TMA unit
    for (int i = 0; i < kTmaStages; ++i) {
      const long long s = group + i * groups;
      if (s < v.segments)
        for (int c = 0; c < kTmaChunks; ++c)
          issue_chunk(x, stages + i * stage_floats, tma_unit(v, s, k, stage_floats), c, chunk_floats,
                      &full[i * kTmaChunks + c]);
    }
  }
  __syncthreads();
  const double n = static_cast<double>(v.length);
  long long round = 0;
  for (long long s = group; s < v.segments; s += groups, ++round) {
    const int st = static_cast<int>(round % kTmaStages);
    float* stage = stages + st * stage_floats;
    const TmaUnit u = tma_unit(v, s, k, stage_floats);
    const unsigned parity = static_cast<unsigned>((round / kTmaStages) & 1);
    unsigned long long* bars = &full[st * kTmaChunks];
    Context c{0.0f};
    Stat totals[kPasses];
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
      Stat mine = identity(pass);
      const Adder add_one{mine, pass, c};
      visit<false, false>(x, nullptr, 0, u.g_lo, u.a0, true, add_one);  // the unaligned head
      if (pass == 0) {  // each piece summed as it lands
        for (int ch = 0; ch < kTmaChunks; ++ch) {
          wait_phase(&bars[ch], parity);
          visit<true, false>(x, stage, u.a0, u.a0 + chunk_lo(u, ch, chunk_floats),
                             u.a0 + chunk_hi(u, ch, chunk_floats), true, add_one);
        }
      } else {
        visit<true, false>(x, stage, u.a0, u.a0, u.k_end, true, add_one);
      }
      visit<false, false>(x, nullptr, 0, u.k_end, u.g_hi, true, add_one);  // beyond the stage
      totals[pass] = tma_parts_combine(block_combine(mine, pass), pass, round);
      if (pass + 1 < kPasses) c.prev = after_pass(totals[pass], pass, n);
    }
    const Factors f = finish(totals, n, c);
    transform<false>(x, nullptr, 0, y, u.g_lo, u.a0, true, f);
    // The map piece by piece; each piece, once every thread is done with it, is refilled with the
    // unit kTmaStages rounds ahead (after its bulk store has read it out), so the next unit's
    // loads run while the rest of this one is mapped and stored.
    const long long ahead = s + static_cast<long long>(kTmaStages) * groups;
    const bool refill = ahead < v.segments;
    const TmaUnit next = tma_unit(v, refill ? ahead : s, k, stage_floats);
    for (int ch = 0; ch < kTmaChunks; ++ch) {
      const long long lo = chunk_lo(u, ch, chunk_floats), hi = chunk_hi(u, ch, chunk_floats);
      if constexpr (kBulkStore) {
        // The map in place in the stage, then one bulk store of the piece: no thread waits for
        // its stores, and the whole piece is in flight to HBM at once.
        float4* stage4 = reinterpret_cast<float4*>(stage);
        for (long long q = lo / 4 + threadIdx.x; q < hi / 4; q += kThreads) {
          const float4 a = stage4[q];
          stage4[q] = make_float4(map_one(a.x, f), map_one(a.y, f), map_one(a.z, f), map_one(a.w, f));
        }
        // Each thread's generic-proxy writes are ordered before the async proxy's read of them.
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
      } else {
        transform<true>(x, stage, u.a0, y, u.a0 + lo, u.a0 + hi, true, f);
      }
      __syncthreads();  // the piece is read (or mapped) to the end before the TMA stores or refills it
      if (threadIdx.x == 0) {
        if constexpr (kBulkStore) {
          if (hi > lo) {
            for (long long at = lo; at < hi; at += 16384)
              bulk_store(y + u.a0 + at, stage + at, static_cast<unsigned>(min(hi - at, 16384LL) * 4));
            bulk_commit();
          }
          // The previous piece's store has read it out (this one's may still be reading): refill
          // that one. The last piece is refilled after the loop.
          if (refill && ch > 0) {
            if (hi > lo)
              bulk_wait_read_but_last();
            else
              bulk_wait_read();
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
            issue_chunk(x, stage, next, ch - 1, chunk_floats, &bars[ch - 1]);
          }
        } else if (refill) {
          // The generic-proxy reads above are ordered before the async-proxy writes of the refill.
          asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
          issue_chunk(x, stage, next, ch, chunk_floats, &bars[ch]);
        }
      }
    }
    if constexpr (kBulkStore) {
      if (threadIdx.x == 0 && refill) {
        bulk_wait_read();  // the last piece's store has read it out
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        issue_chunk(x, stage, next, kTmaChunks - 1, chunk_floats, &bars[kTmaChunks - 1]);
      }
    }
    transform<false>(x, nullptr, 0, y, u.k_end, u.g_hi, true, f);
  }
  if constexpr (kBulkStore) {
    if (threadIdx.x == 0) bulk_wait_all();  // the stores are done before the block's memory goes
  }
  if constexpr (kCluster) cluster_sync();  // peers may still read this block's slots
}
)";

// grid-split-row: units of a segment meet at a counter in global memory inside one launch.
constexpr const char* kGridKernel = R"(
// grid-split-row: one persistent launch whose blocks are all resident at once (a cooperative
// launch refuses a grid that is not). Block b is unit b % kParts of group b / kParts; a group takes
// segments group, group + groups, ... in rounds. At each statistics pass the group's blocks publish
// their partials in global memory and wait at the group's arrival counter instead of ending the
// kernel, so a unit kept in shared memory is read from HBM once even where a segment is larger than
// a cluster's shared memory (the grid-wide barrier of a cooperative kernel, narrowed to a group).
// The counter only grows: arrival number t belongs to the generation t / kParts, which is complete
// at counter (t / kParts + 1) * kParts; every block of a group makes the same calls, and a launch
// starts after the previous one ended (one stream), so no reset is needed between launches.
__device__ __forceinline__ Stat load_stat_cg(const Stat* p) {
  const float* f = reinterpret_cast<const float*>(p);
  return {__ldcg(f), __ldcg(f + 1), __ldcg(f + 2)};
}
__device__ __forceinline__ Stat group_combine(Stat mine, int pass, Stat* partials, unsigned long long* arrivals,
                                              long long group, long long k, unsigned& generation) {
  __shared__ Stat total;
  // Two slot sets by generation parity: a block writing generation g + 2 has passed g + 1's wait,
  // so every sibling has finished reading generation g's partials.
  Stat* slots = partials + (group * 2 + (generation & 1u)) * kParts;
  ++generation;
  if (threadIdx.x == 0) {
    slots[k] = mine;
    __threadfence();  // the partial is visible before the arrival
    const unsigned long long ticket = atomicAdd(arrivals + group, 1ULL);
    const unsigned long long complete = (ticket / kParts + 1) * kParts;
    while (*reinterpret_cast<volatile unsigned long long*>(arrivals + group) < complete) __nanosleep(40);
  }
  __syncthreads();
  if (threadIdx.x < 32) {
    __threadfence();
    // Lane l combines units l, l + 32, ... in order, then the lanes combine as a tree: a fixed
    // order, so every block of the group (and every launch) gets the same total.
    Stat t = identity(pass);
    for (int r = threadIdx.x; r < kParts; r += 32) t = combine(t, load_stat_cg(slots + r), pass);
    for (int by = 16; by > 0; by /= 2) {
      const Stat o{__shfl_down_sync(0xffffffffu, t.a, by), __shfl_down_sync(0xffffffffu, t.b, by),
                   __shfl_down_sync(0xffffffffu, t.n, by)};
      if (threadIdx.x + by < 32) t = combine(t, o, pass);
    }
    if (threadIdx.x == 0) total = t;
  }
  __syncthreads();
  const Stat result = total;
  __syncthreads();  // every thread has its copy before the next call overwrites it
  return result;
}

__global__ void __launch_bounds__(kThreads, kMinBlocks) grid_norm_kernel(const float* __restrict__ x, float* __restrict__ y, View v,
                                                             bool aligned, long long kept_floats, Stat* partials,
                                                             unsigned long long* arrivals) {
  extern __shared__ float4 kept4[];
  float* kept = reinterpret_cast<float*>(kept4);
  const long long groups = gridDim.x / kParts;
  const long long group = blockIdx.x / kParts;
  const long long k = blockIdx.x % kParts;  // the block's unit in each segment
  const long long chunk = unit_chunk(v);
  const long long lo = min(v.length, k * chunk), hi = min(v.length, lo + chunk);
  const bool keep = kept_floats > 0;
  const double n = static_cast<double>(v.length);
  unsigned generation = 0;
  if constexpr (kStages > 1) {
    if (keep) {  // rounds pipelined through kStages stages of kept_floats each
      for (int i = 0; i < kStages - 1; ++i) {
        const long long s = group + i * groups;
        if (s < v.segments) {
          const Unit a = unit_of(v, s, lo, hi, kept_floats);
          prefetch_unit(x, kept + i * kept_floats, a.sbase, a.k_end, aligned);
        }
        commit_copies();  // one group a round, empty or not, so the wait below counts rounds
      }
      long long round = 0;
      for (long long s = group; s < v.segments; s += groups, ++round) {
        const long long ahead = s + (kStages - 1) * groups;
        if (ahead < v.segments) {
          const Unit a = unit_of(v, ahead, lo, hi, kept_floats);
          prefetch_unit(x, kept + ((round + kStages - 1) % kStages) * kept_floats, a.sbase, a.k_end, aligned);
        }
        commit_copies();
        wait_copies<kStages - 1>();  // this round's stage has landed (this thread's copies)
        __syncthreads();             // ... and every other thread's
        float* stage = kept + (round % kStages) * kept_floats;
        const Unit u = unit_of(v, s, lo, hi, kept_floats);
        Context c{0.0f};
        Stat totals[kPasses];
#pragma unroll
        for (int pass = 0; pass < kPasses; ++pass) {
          Stat mine = identity(pass);
          const Adder add_one{mine, pass, c};
          visit<true, false>(x, stage, u.sbase, u.g_lo, u.k_end, aligned, add_one);
          visit_rest(x, v, u, aligned, add_one);
          totals[pass] = group_combine(block_combine(mine, pass), pass, partials, arrivals, group, k, generation);
          if (pass + 1 < kPasses) c.prev = after_pass(totals[pass], pass, n);
        }
        map_unit(x, stage, y, v, u, aligned, finish(totals, n, c));
        __syncthreads();  // the stage is read to the end before a later round's copies refill it
      }
      wait_copies<0>();
      return;
    }
  }
  for (long long s = group; s < v.segments; s += groups) {
    const Unit u = unit_of(v, s, lo, hi, kept_floats);
    Context c{0.0f};
    Stat totals[kPasses];
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
      Stat mine = identity(pass);
      const Adder add_one{mine, pass, c};
      if (u.keep) {  // the kept part: read from x and kept on the first pass
        if (pass > 0)
          visit<true, false>(x, kept, u.sbase, u.g_lo, u.k_end, aligned, add_one);
        else
          visit<false, true>(x, kept, u.sbase, u.g_lo, u.k_end, aligned, add_one);
      }
      visit_rest(x, v, u, aligned, add_one);
      totals[pass] = group_combine(block_combine(mine, pass), pass, partials, arrivals, group, k, generation);
      if (pass + 1 < kPasses) c.prev = after_pass(totals[pass], pass, n);
    }
    map_unit(x, kept, y, v, u, aligned, finish(totals, n, c));
    __syncthreads();  // the kept copy is read to the end before the next segment fills it
  }
}
)";

// block combines its segment's partials in order.
constexpr const char* kSplitKernels = R"(
// Segment s's context before pass `pass`, from the partials [pass][segment][unit] of earlier passes.
__device__ Context context_before(const Stat* partials, const View& v, long long s, int pass, const float* x,
                                  Stat* totals) {
  (void)x;
  Context c{0.0f};
  for (int p = 0; p < pass; ++p) {
    Stat t = identity(p);
    for (int k = 0; k < kParts; ++k) t = combine(t, partials[(p * v.segments + s) * kParts + k], p);
    totals[p] = t;
    if (p + 1 < kPasses) c.prev = after_pass(t, p, static_cast<double>(v.length));
  }
  return c;
}

__global__ void __launch_bounds__(kThreads) stats_kernel(const float* __restrict__ x, View v, bool aligned, int pass,
                                                         Stat* partials) {
  const long long s = blockIdx.x / kParts, k = blockIdx.x % kParts;
  const long long chunk = unit_chunk(v);
  const long long lo = min(v.length, k * chunk), hi = min(v.length, lo + chunk);
  Stat totals[kPasses];
  const Context c = context_before(partials, v, s, pass, x, totals);
  Stat mine = identity(pass);
  const Adder add_one{mine, pass, c};
  for_pieces(v, s, lo, hi, [&](long long g0, long long g1) { visit<false, false>(x, nullptr, 0, g0, g1, aligned, add_one); });
  const Stat total = block_combine(mine, pass);
  if (threadIdx.x == 0) partials[(pass * v.segments + s) * kParts + k] = total;
}

__global__ void __launch_bounds__(kThreads) map_kernel(const float* __restrict__ x, float* __restrict__ y, View v,
                                                       bool aligned, const Stat* partials) {
  const long long s = blockIdx.x / kParts, k = blockIdx.x % kParts;
  const long long chunk = unit_chunk(v);
  const long long lo = min(v.length, k * chunk), hi = min(v.length, lo + chunk);
  Stat totals[kPasses];
  const Context c = context_before(partials, v, s, kPasses, x, totals);
  const Factors f = finish(totals, static_cast<double>(v.length), c);
  for_pieces(v, s, lo, hi, [&](long long g0, long long g1) { transform<false>(x, nullptr, 0, y, g0, g1, aligned, f); });
}
)";

// The host side of the contiguous-segment mappings (both query the device once).
constexpr const char* kHostStatics = R"(
static int sms = 0, smem_optin = 0;
)";
constexpr const char* kSplitHost = R"(static Stat* partials = nullptr;
static long long partials_capacity = 0;
// Freed when the library is unloaded: a judge server loads candidate after candidate into one
// process, and memory a candidate keeps would stay until the server ends.
__attribute__((destructor)) static void release_partials() {
  if (partials != nullptr) cudaFree(partials);
}

static int run_segments(const float* x, float* y, const View& v, bool aligned, cudaStream_t stream) {
  const long long blocks = v.segments * kParts;
  if (blocks > 2147483647LL) return 4;
  const long long wanted = static_cast<long long>(kPasses) * v.segments * kParts;
  if (wanted > partials_capacity) {
    cudaFree(partials);
    partials = nullptr;
    partials_capacity = 0;
    if (cudaMalloc(&partials, sizeof(Stat) * wanted) != cudaSuccess) return 5;
    partials_capacity = wanted;
  }
  for (int pass = 0; pass < kPasses; ++pass)
    KILN_LAUNCH(stats_kernel, static_cast<unsigned>(blocks), kThreads, 0, stream, x, v, aligned, pass,
                partials);
  KILN_LAUNCH(map_kernel, static_cast<unsigned>(blocks), kThreads, 0, stream, x, y, v, aligned, partials);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
)";
constexpr const char* kFusedHost =
    R"(static int smem_set = 0;  // the kernel's dynamic shared memory limit as set

static int run_segments(const float* x, float* y, const View& v, bool aligned, cudaStream_t stream) {
  const long long blocks = v.segments * kParts;
  if (blocks > 2147483647LL) return 4;
  // keep-on-chip: as much of a unit's range (one run) as kKeepFloats and the device allow, in
  // dynamic shared memory (+4: the range's start rounded down to 16 bytes).
  long long kept_floats = 0;
  if (kKeepFloats > 0 && v.runs == 1) {
    kept_floats = unit_chunk(v) + 4 < kKeepFloats ? unit_chunk(v) + 4 : kKeepFloats;
    const long long most = (smem_optin - 16384) / 4;  // room for the block's static arrays
    if (kept_floats > most) kept_floats = most;
    kept_floats = kept_floats >= 4 ? kept_floats & ~3LL : 0;
  }
  const int smem = static_cast<int>(kept_floats * 4);
  static bool non_portable_set = false;
  if (kParts > 8 && !non_portable_set) {  // Hopper allows 16-block clusters when asked
    if (cudaFuncSetAttribute(KILN_KERNEL(norm_kernel), cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess)
      return 7;
    non_portable_set = true;
  }
  if (smem > smem_set) {
    if (cudaFuncSetAttribute(KILN_KERNEL(norm_kernel), cudaFuncAttributeMaxDynamicSharedMemorySize, smem) != cudaSuccess)
      return 6;
    smem_set = smem;
  }
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(blocks));
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = static_cast<size_t>(smem);
  config.stream = stream;
  cudaLaunchAttribute cluster[1];
  cluster[0].id = cudaLaunchAttributeClusterDimension;
  cluster[0].val.clusterDim.x = kParts;
  cluster[0].val.clusterDim.y = 1;
  cluster[0].val.clusterDim.z = 1;
  config.attrs = cluster;
  config.numAttrs = kCluster ? 1 : 0;
  if (KILN_LAUNCH_EX(&config, norm_kernel, x, y, v, aligned, kept_floats) != cudaSuccess) return 1;
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
)";

constexpr const char* kTmaHost = R"(
static int tma_smem_set = 0;  // tma_norm_kernel's dynamic shared memory limit as set

// tma-bulk where the segments are single runs and x, y are 16-byte aligned; the fused kernel
// (unpipelined) otherwise.
static int run_segments(const float* x, float* y, const View& v, bool aligned, cudaStream_t stream) {
  if (v.runs != 1 || !aligned) return run_fused(x, y, v, aligned, stream);
  // A stage holds a unit (rounded to 16 bytes), capped by keep-on-chip and by the device's shared
  // memory shared among kTmaStages stages (16 KiB left for the static arrays).
  long long stage_floats = unit_chunk(v) + 4 < kKeepFloats ? unit_chunk(v) + 4 : kKeepFloats;
  const long long most = (smem_optin - 16384) / 4 / kTmaStages;
  if (stage_floats > most) stage_floats = most;
  stage_floats &= ~3LL;
  if (stage_floats < 4) return run_fused(x, y, v, aligned, stream);
  const int smem = static_cast<int>(stage_floats * 4 * kTmaStages);
  static bool non_portable_set = false;
  if (kParts > 8 && !non_portable_set) {  // Hopper allows 16-block clusters when asked
    if (cudaFuncSetAttribute(KILN_KERNEL(tma_norm_kernel), cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess)
      return 7;
    non_portable_set = true;
  }
  if (smem > tma_smem_set) {
    if (cudaFuncSetAttribute(KILN_KERNEL(tma_norm_kernel), cudaFuncAttributeMaxDynamicSharedMemorySize, smem) != cudaSuccess)
      return 6;
    tma_smem_set = smem;
  }
  cudaLaunchConfig_t config = {};
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = static_cast<size_t>(smem);
  config.stream = stream;
  cudaLaunchAttribute cluster[1];
  cluster[0].id = cudaLaunchAttributeClusterDimension;
  cluster[0].val.clusterDim.x = kParts;
  cluster[0].val.clusterDim.y = 1;
  cluster[0].val.clusterDim.z = 1;
  config.attrs = cluster;
  config.numAttrs = kCluster ? 1 : 0;
  // Persistent: as many clusters (blocks) as are resident at once, at most one per segment.
  long long resident = 0;
  if (kCluster) {
    config.gridDim = dim3(static_cast<unsigned>(kParts));
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, KILN_KERNEL(tma_norm_kernel), &config) != cudaSuccess) return 1;
    resident = clusters;
  } else {
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, KILN_KERNEL(tma_norm_kernel), kThreads, smem) != cudaSuccess)
      return 1;
    resident = static_cast<long long>(per_sm) * sms;
  }
  if (resident < 1) return 8;  // a cluster of this size does not fit on the device
  const long long groups = resident < v.segments ? resident : v.segments;
  config.gridDim = dim3(static_cast<unsigned>(groups * kParts));
  if (KILN_LAUNCH_EX(&config, tma_norm_kernel, x, y, v, stage_floats) != cudaSuccess) return 1;
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
)";

constexpr const char* kGridHost =
    R"(static int smem_set = 0;  // the kernel's dynamic shared memory limit as set
static Stat* partials = nullptr;
static unsigned long long* arrivals = nullptr;
static long long groups_capacity = 0;
// Freed when the library is unloaded: a judge server loads candidate after candidate into one
// process, and memory a candidate keeps would stay until the server ends.
__attribute__((destructor)) static void release_partials() {
  if (partials != nullptr) cudaFree(partials);
  if (arrivals != nullptr) cudaFree(arrivals);
}

static int run_segments(const float* x, float* y, const View& v, bool aligned, cudaStream_t stream) {
  // keep-on-chip as in the fused kernel: as much of a unit's range (one run) as kKeepFloats and
  // the device allow.
  // cp-async-pipeline: kStages stages of kept_floats each.
  long long kept_floats = 0;
  if (kKeepFloats > 0 && v.runs == 1) {
    kept_floats = unit_chunk(v) + 4 < kKeepFloats ? unit_chunk(v) + 4 : kKeepFloats;
    const long long most = (smem_optin - 16384) / 4 / kStages;  // room for the static arrays
    if (kept_floats > most) kept_floats = most;
    kept_floats = kept_floats >= 4 ? kept_floats & ~3LL : 0;
  }
  const int smem = static_cast<int>(kept_floats * 4 * kStages);
  if (smem > smem_set) {
    if (cudaFuncSetAttribute(KILN_KERNEL(grid_norm_kernel), cudaFuncAttributeMaxDynamicSharedMemorySize, smem) != cudaSuccess)
      return 6;
    smem_set = smem;
  }
  // Every block resident at once: as many whole groups as the SMs hold, at most one per segment.
  int per_sm = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, KILN_KERNEL(grid_norm_kernel), kThreads, smem) != cudaSuccess)
    return 1;
  long long groups = static_cast<long long>(per_sm) * sms / kParts;
  if (groups > v.segments) groups = v.segments;
  if (groups < 1) return 8;  // kParts blocks of this size do not fit on the device at once
  if (groups > groups_capacity) {
    cudaFree(partials);
    cudaFree(arrivals);
    partials = nullptr;
    arrivals = nullptr;
    groups_capacity = 0;
    if (cudaMalloc(&partials, sizeof(Stat) * 2 * kParts * groups) != cudaSuccess ||
        cudaMalloc(&arrivals, sizeof(unsigned long long) * groups) != cudaSuccess ||
        cudaMemset(arrivals, 0, sizeof(unsigned long long) * groups) != cudaSuccess)
      return 5;
    groups_capacity = groups;
  }
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(groups * kParts));
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = static_cast<size_t>(smem);
  config.stream = stream;
  cudaLaunchAttribute cooperative[1];
  cooperative[0].id = cudaLaunchAttributeCooperative;  // co-residency guaranteed, or an error
  cooperative[0].val.cooperative = 1;
  config.attrs = cooperative;
  config.numAttrs = 1;
  if (KILN_LAUNCH_EX(&config, grid_norm_kernel, x, y, v, aligned, kept_floats, partials, arrivals) != cudaSuccess)
    return 1;
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
)";

// RMSNorm over channels: segments are columns; a thread owns kVec adjacent columns.
constexpr const char* kStridedKernel = R"(
// The type of V adjacent columns (std::conditional without the standard library, which NVRTC does
// not have).
template <int V>
struct ColumnsOf {
  using type = float;
};
template <>
struct ColumnsOf<4> {
  using type = float4;
};

// Segment (p, r): x[(p * q + j) * r_len + r] for j < q. Columns kept in registers when q <= kKeepQ.
template <int V>
__global__ void __launch_bounds__(kThreads) strided_kernel(const float* __restrict__ x, float* __restrict__ y,
                                                           long long p_len, long long q, long long r_len) {
  using Vec = typename ColumnsOf<V>::type;
  const long long groups = p_len * (r_len / V);
  const long long g = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x;
  if (g >= groups) return;
  const long long p = g / (r_len / V), r = (g % (r_len / V)) * V;
  const Vec* xs = reinterpret_cast<const Vec*>(x + p * q * r_len + r);
  Vec* ys = reinterpret_cast<Vec*>(y + p * q * r_len + r);
  const long long step = r_len / V;  // one channel further, in Vec
  constexpr int kKeepQ = kKeepRegisters / V;
  float acc[V];
#pragma unroll
  for (int i = 0; i < V; ++i) acc[i] = 0.0f;
  const Context c{0.0f};
  auto accumulate = [&](Vec v) {
    const float* lanes = reinterpret_cast<const float*>(&v);
#pragma unroll
    for (int i = 0; i < V; ++i) {
      Stat s{acc[i], 0.0f, 0.0f};
      add(s, lanes[i], 0, c);
      acc[i] = s.a;
    }
  };
  // keep-on-chip: every load issued up front into registers, the map from them.
  Vec held[kKeepQ > 0 ? kKeepQ : 1];
  const bool keep = kKeepQ > 0 && q <= kKeepQ;
  if (keep) {
#pragma unroll
    for (int h = 0; h < kKeepQ; ++h)
      if (h < q) held[h] = __ldg(xs + h * step);
#pragma unroll
    for (int h = 0; h < kKeepQ; ++h)
      if (h < q) accumulate(held[h]);
  } else {
    for (long long j = 0; j < q; j += kUnroll) {
      Vec v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
        if (j + u < q) v[u] = __ldg(xs + (j + u) * step);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
        if (j + u < q) accumulate(v[u]);
    }
  }
  Factors f[V];
#pragma unroll
  for (int i = 0; i < V; ++i) {
    const Stat t{acc[i], 0.0f, 0.0f};
    f[i] = finish(&t, static_cast<double>(q), c);
  }
  auto map_vec = [&](Vec v) {
    float* lanes = reinterpret_cast<float*>(&v);
#pragma unroll
    for (int i = 0; i < V; ++i) lanes[i] = map_one(lanes[i], f[i]);
    return v;
  };
  if (keep) {
#pragma unroll
    for (int h = 0; h < kKeepQ; ++h)
      if (h < q) ys[h * step] = map_vec(held[h]);
    return;
  }
  for (long long j = 0; j < q; ++j) ys[j * step] = map_vec(__ldg(xs + j * step));
}
)";

}  // namespace

std::string generate_norm_candidate(const Genome& g, const std::string& problem) {
  const std::optional<NormKind> kind = norm_kind_of(problem);
  if (!kind) throw UsageError(fmt::format("{}: not a normalisation problem", problem));
  require_translatable(g, Family::kReduceAxis, norm_generated_strategies(problem), "normalisation");
  // cp-async-pipeline stages what is kept by cp.async (grid-split-row: units of later rounds; one
  // unit a block: its chunks) and reads it as the kept copy, so it implies keeping; the rest of
  // a unit takes the 16-byte path. (split-row keeps nothing between its kernels: the catalog
  // declares the two incompatible.)
  const bool pipeline = g.has("cp-async-pipeline");
  // tma-bulk stages whole units rounds ahead in a persistent grid of blocks or clusters (one
  // unit a block); it implies keeping, and reads the kept copy with 16-byte vectors.
  const bool tma = g.has("tma-bulk");
  const bool cluster = g.has("cluster-split-row");
  const bool split = g.has("split-row");
  const bool grid = g.has("grid-split-row");
  if (tma && (split || grid))
    throw UsageError(
        fmt::format("normalisation generator: tma-bulk stages one unit a block (row-per-block or "
                    "cluster-split-row), not {}",
                    split ? "split-row" : "grid-split-row"));

  const bool vector = pipeline || tma || g.has("vector16-loads");
  const int unroll = pipeline ? 2
                     : tma    ? 4
                     : vector ? g.knob("vector16-loads", "unroll")
                              : g.knob("scalar-loads", "unroll");
  const int stages = pipeline ? g.knob("cp-async-pipeline", "stages") : 1;
  const int tma_stages = tma ? g.knob("tma-bulk", "stages") : 1;
  const int tma_chunks = tma ? g.knob("tma-bulk", "chunks") : 1;
  const bool keep = pipeline || tma || g.has("keep-on-chip");
  const int threads = split     ? g.knob("split-row", "threads")
                      : cluster ? g.knob("cluster-split-row", "threads")
                      : grid    ? g.knob("grid-split-row", "threads")
                                : g.knob("row-per-block", "threads");
  const int parts = split     ? g.knob("split-row", "splits")
                    : cluster ? g.knob("cluster-split-row", "cluster")
                    : grid    ? g.knob("grid-split-row", "splits")
                              : 1;
  // Two statistics take two passes unless one-pass is asked for (kept data is re-read on chip).
  const int passes = kind->two_statistics && !g.has("online-one-pass") ? 2 : 1;
  // A stage without keep-on-chip's cap holds a whole unit, or what the device's shared memory
  // allows (the host side decides).
  const long long keep_floats = g.has("keep-on-chip")
                                    ? g.knob("keep-on-chip", "max_row_kib") * 256LL
                                : keep ? (1LL << 40)
                                       : 0;
  // Blocks an SM holds by shared memory (sm_90: 228 KiB an SM, 1 KiB reserved a block, ~1 KiB of
  // the block's static arrays), at most 2048 threads; 1 (no register cap) where nothing is kept,
  // and where cp.async or the TMA stage whole units (their size is the problem's, not known here).
  int min_blocks = 1;
  if (g.has("keep-on-chip") && !pipeline && !tma && !kind->strided) {
    const long long by_smem = 228LL * 1024 / (keep_floats * 4 + 2048);
    min_blocks = static_cast<int>(std::max(1LL, std::min<long long>(2048 / threads, by_smem)));
  }
  // Where a segment starts and how its runs lie, from the problem's dims (kb1_norms.cpp's view).
  std::string view;
  if (kind->view == "rows")
    view = "View{rows, cols, cols, 1, cols, 0}";
  else if (kind->view == "instance")
    view = "View{batch * features, dim1 * dim2, dim1 * dim2, 1, dim1 * dim2, 0}";
  else if (kind->view == "group")
    view =
        "View{batch * 8, features / 8 * dim1 * dim2, features / 8 * dim1 * dim2, 1, "
        "features / 8 * dim1 * dim2, 0}";
  else if (kind->view == "sample")
    view =
        "View{batch, features * dim1 * dim2, features * dim1 * dim2, 1, features * dim1 * dim2, "
        "0}";
  else if (kind->view == "whole")
    view = "View{1, count, count, 1, count, 0}";
  else if (kind->view == "channels-outer")
    view =
        "View{features, batch * dim1 * dim2, dim1 * dim2, batch, dim1 * dim2, "
        "features * dim1 * dim2}";
  std::string mapping, shared, kernels, host, run;
  if (kind->strided) {
    mapping = fmt::format("a thread per column ({} adjacent)", vector ? 4 : 1);
    kernels = kStridedKernel;
    run = fmt::format(R"(  const long long p_len = batch, q = features, r_len = dim1 * dim2;
  const bool vec = {} && r_len % 4 == 0 && aligned;
  const long long groups = p_len * (vec ? r_len / 4 : r_len);
  const long long blocks = (groups + kThreads - 1) / kThreads;
  if (blocks > 2147483647LL) return 4;
  if (vec)
    KILN_LAUNCH(strided_kernel<4>, static_cast<unsigned>(blocks), kThreads, 0, stream, x, y, p_len, q, r_len);
  else
    KILN_LAUNCH(strided_kernel<1>, static_cast<unsigned>(blocks), kThreads, 0, stream, x, y, p_len, q, r_len);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
)",
                      vector ? "true" : "false");
  } else {
    mapping = split  ? fmt::format("{} blocks per segment, partials through global memory", parts)
              : grid ? fmt::format(
                           "{} blocks per segment in one persistent cooperative launch, partials "
                           "through global memory and a per-group arrival counter",
                           parts)
              : cluster ? fmt::format(
                              "a cluster of {} blocks per segment, partials through "
                              "distributed shared memory",
                              parts)
                        : "a block per segment";
    if (tma)
      mapping += fmt::format(
          "; persistent, units copied by the TMA engine {} rounds ahead{} (the fused kernel where "
          "segments are not single runs or x, y are not 16-byte aligned)",
          tma_stages,
          tma_chunks > 1 ? fmt::format(" in {} pieces, each refilled once mapped", tma_chunks)
                         : "");
    std::string fused_host = kFusedHost;
    if (tma) replace_all(fused_host, "static int run_segments(", "static int run_fused(");
    shared = kViewPart;
    kernels = std::string(kSegmentPart) + (split ? "" : kCopyAsyncPart) +
              (split  ? kSplitKernels
               : grid ? kGridKernel
               : tma  ? std::string(kFusedKernel) + kTmaKernel
                      : kFusedKernel);
    host = std::string(kHostStatics) + (split  ? kSplitHost
                                        : grid ? kGridHost
                                        : tma  ? fused_host + kTmaHost
                                               : fused_host);
    run = fmt::format("  return run_segments(x, y, {}, aligned, stream);\n", view);
  }
  std::string source =
      R"(// Generated by kiln evolve for $PROBLEM ($OP over $VIEW segments); do not edit.
// Genome $HASH: $DESCRIBE
// Work mapping: $MAPPING; $PASSES statistics pass(es)$KEEP.
// kiln-host: begin
#include <cuda_runtime.h>
#include <cstring>

#include "kiln/candidate.h"
// kiln-host: end
#include "kiln/candidate_split.h"

constexpr int kThreads = $THREADS;
constexpr int kUnroll = $UNROLL;  // loads in flight per thread and step
constexpr int kParts = $PARTS;    // units (blocks) per segment
constexpr bool kSplit = $SPLIT;   // units combine through global memory between kernels
constexpr bool kCluster = $CLUSTER;  // units are a cluster's blocks
constexpr int kPasses = $PASSES;  // statistics passes before the map
constexpr long long kKeepFloats = $KEEP_FLOATS;  // keep-on-chip: most floats of a unit kept in shared memory
constexpr int kStages = $STAGES;  // cp-async-pipeline stages (rounds ahead + 1, or chunks); 1: none
// keep-on-chip: the blocks an SM holds by the kept copy's shared memory; registers are capped to
// match (a 64 KiB copy allows 3 blocks of 512 threads, 42 registers each: at 48, ptxas's choice
// for the 2026-11-30 load path, two fit and softmax lost 20%).
constexpr int kMinBlocks = $MIN_BLOCKS;
constexpr int kTmaStages = $TMA_STAGES;  // tma-bulk: units in flight per block (rounds ahead)
constexpr bool kBulkStore = $BULK_STORE;  // tma-bulk: the map in place, stored by the TMA engine
constexpr int kTmaChunks = $TMA_CHUNKS;  // tma-bulk: pieces of a stage, each refilled once mapped
constexpr bool kStreamHints = $STREAM_HINTS;  // cache-streaming: last reads and stores evict-first
constexpr bool kFastExp = $FAST_EXP;  // fast-exp: exp on the special-function unit (softmax)
constexpr int kKeepRegisters = $KEEP_REGISTERS;  // keep-on-chip, strided: floats per thread in registers
constexpr double kEps = 1e-5;

// a, b: the statistic (softmax: max, sum of exp; one-pass variance: mean, squared deviations);
// n: the elements counted (one-pass variance only).
struct Stat {
  float a, b, n;
};
struct Factors {
  float f0, f1;
};
// What the previous pass found (the maximum or the mean).
struct Context {
  float prev;
};

$SHARED
// kiln-device: begin
$STATISTIC
$BLOCK_COMBINE
$LOAD
$KERNELS
// kiln-device: end

// kiln-host: begin
$HOST
extern "C" int kiln_candidate_abi_version(void) { return KILN_CANDIDATE_ABI_VERSION; }

extern "C" int kiln_candidate_run(const KilnCandidateArgs* a) {
  if (a->num_inputs < 1 || a->num_outputs < 1 || a->dtype != KILN_FP32) return 2;
  long long rows = 0, cols = 0, batch = 0, features = 0, dim1 = 0, dim2 = 0;
  for (int i = 0; i < a->num_dims; ++i) {
    const char* name = a->dim_names[i];
    if (std::strcmp(name, "rows") == 0) rows = a->dims[i];
    if (std::strcmp(name, "cols") == 0) cols = a->dims[i];
    if (std::strcmp(name, "batch") == 0) batch = a->dims[i];
    if (std::strcmp(name, "features") == 0) features = a->dims[i];
    if (std::strcmp(name, "dim1") == 0) dim1 = a->dims[i];
    if (std::strcmp(name, "dim2") == 0) dim2 = a->dims[i];
  }
  const long long count = rows > 0 ? rows * cols : batch * features * dim1 * dim2;
  if (count <= 0 || a->input_bytes[0] != static_cast<unsigned long long>(count) * sizeof(float) ||
      a->output_bytes[0] != static_cast<unsigned long long>(count) * sizeof(float))
    return 3;
  const float* x = static_cast<const float*>(a->inputs[0]);
  float* y = static_cast<float*>(a->outputs[0]);
  cudaStream_t stream = static_cast<cudaStream_t>(a->stream);
  const bool aligned = reinterpret_cast<unsigned long long>(x) % 16 == 0 &&
                       reinterpret_cast<unsigned long long>(y) % 16 == 0;
  (void)aligned;
$DEVICE_QUERY$RUN}
// kiln-host: end
)";
  const std::string device_query = kind->strided ? "" : R"(  if (sms == 0) {
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess)
      return 1;
  }
)";
  replace_all(source, "$STATISTIC", statistic_part(*kind, passes));
  replace_all(source, "$BLOCK_COMBINE",
              kind->strided ? "" : block_combine_part(g.has("warp-shuffle")));
  replace_all(source, "$LOAD", kind->strided ? "" : load_part(vector));
  replace_all(source, "$SHARED", shared);
  replace_all(source, "$KERNELS", kernels);
  replace_all(source, "$HOST", host);
  replace_all(source, "$DEVICE_QUERY", device_query);
  replace_all(source, "$RUN", run);

  replace_all(source, "$PROBLEM", problem);
  replace_all(source, "$OP", kind->op);
  replace_all(source, "$VIEW", kind->view);
  replace_all(source, "$HASH", fmt::format("{:016x}", g.hash()));
  replace_all(source, "$DESCRIBE", g.describe());
  replace_all(source, "$MAPPING", mapping);
  replace_all(source, "$THREADS", std::to_string(threads));
  replace_all(source, "$UNROLL", std::to_string(unroll));
  replace_all(source, "$PARTS", std::to_string(parts));
  replace_all(source, "$SPLIT", split ? "true" : "false");
  replace_all(source, "$CLUSTER", cluster ? "true" : "false");
  replace_all(source, "$PASSES", std::to_string(kind->strided ? 1 : passes));
  replace_all(source, "$KEEP_FLOATS", std::to_string(kind->strided ? 0 : keep_floats));
  replace_all(source, "$STAGES", std::to_string(stages));
  replace_all(source, "$TMA_STAGES", std::to_string(tma_stages));
  replace_all(source, "$MIN_BLOCKS", std::to_string(min_blocks));
  replace_all(source, "$BULK_STORE", tma && g.knob("tma-bulk", "store") == 1 ? "true" : "false");
  replace_all(source, "$TMA_CHUNKS", std::to_string(tma_chunks));
  replace_all(source, "$STREAM_HINTS", g.has("cache-streaming") ? "true" : "false");
  replace_all(source, "$FAST_EXP", g.has("fast-exp") ? "true" : "false");
  replace_all(source, "$KEEP_REGISTERS", std::to_string(kind->strided && keep ? 64 : 0));
  replace_all(
      source, "$KEEP",
      pipeline ? fmt::format(", the kept data staged by cp.async ({} stages: rounds of units with "
                             "grid-split-row, chunks of the unit otherwise)",
                             stages)
      : tma    ? fmt::format(", the kept data staged by the TMA engine ({} stages)", tma_stages)
      : keep   ? ", the data kept on chip where it fits"
               : "");
  return source;
}

}  // namespace kiln::evolve
