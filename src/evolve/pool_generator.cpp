// Pooling-family code generation (see pool_generator.hpp). Window semantics are PyTorch's, as the
// problems' reference has them (problems/kb1_pooling_kernels.cu): max ignores padded positions
// (-inf where a window holds none); the average divides by the window clipped to the padded extent
// (count_include_pad), product over the axes. A work item is a run of kRun consecutive outputs of
// one output row; its threads loop over the window once for the whole run, so neighbouring outputs
// of a stride-1 window read the same inputs from L1.
#include "evolve/pool_generator.hpp"

#include <fmt/format.h>

#include <initializer_list>
#include <map>

#include "core/error.hpp"

namespace kiln::evolve {

std::optional<PoolWindow> pool_window_of(const std::string& problem) {
  // KernelBench level 1's modules (the same table as problems/kb1_pooling.cpp).
  static const std::map<std::string, PoolWindow> windows = {
      {"kb1-41-maxpool-1d", {true, 1, 8, 1, 4, 3}},
      {"kb1-42-maxpool-2d", {true, 2, 4, 1, 1, 1}},
      {"kb1-43-maxpool-3d", {true, 3, 3, 2, 1, 3}},
      {"kb1-44-avgpool-1d", {false, 1, 8, 1, 4, 1}},
      {"kb1-45-avgpool-2d", {false, 2, 11, 11, 0, 1}},
      {"kb1-46-avgpool-3d", {false, 3, 3, 2, 1, 1}}};
  const auto it = windows.find(problem);
  if (it == windows.end()) return std::nullopt;
  return it->second;
}

std::string pool_axis_source() {
  return R"(struct Axis {
  long long in, out;
};

// kiln-device: begin
// PyTorch's count_include_pad divisor along one pooled axis: the window clipped to the padded
// extent.
__device__ __forceinline__ long long divisor(const Axis& a, long long o) {
  const long long start = o * kStride - kPadding;
  const long long end = start + kKernel < a.in + kPadding ? start + kKernel : a.in + kPadding;
  return end - start;
}

// kiln-device: end

// kiln-host: begin
// PyTorch's output length (ceil_mode False).
static long long out_of(long long in) {
  const long long room = in + 2LL * kPadding - static_cast<long long>(kDilation) * (kKernel - 1) - 1;
  return room < 0 ? 0 : room / kStride + 1;
}
// kiln-host: end
)";
}

std::string pool_window_constants(const PoolWindow& window, bool stream_stores) {
  return fmt::format(R"(// kiln-host: begin
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "kiln/candidate.h"
// kiln-host: end
#include "kiln/candidate_split.h"

constexpr bool kMax = {};  // max pooling, else average (count_include_pad)
constexpr int kDims = {};  // spatial axes pooled (the innermost ones)
constexpr int kKernel = {}, kStride = {}, kPadding = {}, kDilation = {};
// cache-streaming: the output is stored evict-first (st.global.cs), so L2 keeps the input rows
// that neighbouring windows read again.
constexpr bool kStreamStores = {};
// kiln-device: begin
__device__ __forceinline__ void store_out(float* p, float v) {{
  if (kStreamStores)
    __stcs(p, v);
  else
    *p = v;
}}
__device__ __forceinline__ void store_out4(float* p, float4 v) {{
  if (kStreamStores)
    __stcs(reinterpret_cast<float4*>(p), v);
  else
    *reinterpret_cast<float4*>(p) = v;
}}
// kiln-device: end
)",
                     window.max, window.dims, window.kernel, window.stride, window.padding,
                     window.dilation, stream_stores ? "true" : "false");
}

std::string pool_entry_opening() {
  return R"(// kiln-host: begin
extern "C" int kiln_candidate_abi_version(void) { return KILN_CANDIDATE_ABI_VERSION; }

extern "C" int kiln_candidate_run(const KilnCandidateArgs* a) {
  if (a->num_inputs < 1 || a->num_outputs < 1 || a->dtype != KILN_FP32) return 2;
  long long batch = 0, channels = 0, depth = 1, height = 1, width = 1;
  for (int i = 0; i < a->num_dims; ++i) {
    const char* n = a->dim_names[i];
    if (std::strcmp(n, "batch") == 0) batch = a->dims[i];
    if (std::strcmp(n, "channels") == 0) channels = a->dims[i];
    if (std::strcmp(n, "depth") == 0) depth = a->dims[i];
    if (std::strcmp(n, "height") == 0) height = a->dims[i];
    if (std::strcmp(n, "width") == 0 || std::strcmp(n, "length") == 0) width = a->dims[i];
  }
)";
}

const StrategySet& pool_generated_strategies() {
  static const StrategySet generated = {
      "scalar-loads", "vector16-loads", "element-per-thread", "grid-stride",    "persistent-grid",
      "shared-tile",  "register-sweep", "warp-row-separable", "sliding-planes", "cache-streaming"};
  return generated;
}

const StrategySet& pool_generated_strategies(const std::string& problem) {
  const auto without = [](std::initializer_list<const char*> names) {
    StrategySet s = pool_generated_strategies();
    for (const char* n : names) s.erase(n);
    return s;
  };
  // shared-tile stages 1-D and 2-D windows only; register-sweep also needs stride 1 (its ring
  // completes one output row per input row).
  // sliding-planes walks the depth axis: 3-D windows only.
  static const StrategySet no_sweep_or_planes = without({"register-sweep", "sliding-planes"});
  static const StrategySet no_planes = without({"sliding-planes"});
  static const StrategySet no_tile_or_sweep = without({"shared-tile", "register-sweep"});
  const std::optional<PoolWindow> window = pool_window_of(problem);
  if (!window) return pool_generated_strategies();
  if (window->dims > 2) return no_tile_or_sweep;
  return window->stride != 1 ? no_sweep_or_planes : no_planes;
}

PoolTile pool_tile_of(const Genome& g, const PoolWindow& w) {
  PoolTile t{};
  t.threads = g.knob("shared-tile", "threads");
  t.outputs = g.knob("shared-tile", "outputs");
  t.rows = w.dims >= 2 ? g.knob("shared-tile", "rows") : 1;
  const auto span = [&](int outputs) {
    return (outputs - 1) * w.stride + w.dilation * (w.kernel - 1) + 1;
  };
  // Shared memory: the input band (rows_in x span) and its row-pooled copy (rows_in x tile
  // width), within kMaxTileBytes; fewer rows, then fewer outputs a thread, where it is not.
  const auto bytes = [&](const PoolTile& c) {
    const long long rows_in = w.dims >= 2 ? span(c.rows) : 1;
    const long long width = static_cast<long long>(c.threads) * c.outputs;
    return 4 * rows_in * (span(static_cast<int>(width)) + width);
  };
  while (bytes(t) > kMaxTileBytes && t.rows > 1) t.rows /= 2;
  while (bytes(t) > kMaxTileBytes && t.outputs > 1) t.outputs /= 2;
  while (bytes(t) > kMaxTileBytes && t.threads > 32) t.threads /= 2;
  t.width = t.threads * t.outputs;
  t.span = span(t.width);
  t.rows_in = w.dims >= 2 ? span(t.rows) : 1;
  t.shared_bytes = static_cast<int>(bytes(t));
  return t;
}

std::string generate_pool_candidate(const Genome& g, const std::string& problem) {
  const std::optional<PoolWindow> window = pool_window_of(problem);
  if (!window) throw UsageError(fmt::format("{}: not a pooling problem", problem));
  require_translatable(g, Family::kPooling, pool_generated_strategies(), "pooling");
  if (g.has("shared-tile")) return generate_pool_tile_candidate(g, problem, *window);
  if (g.has("register-sweep")) return generate_pool_sweep_candidate(g, problem, *window);
  if (g.has("warp-row-separable")) return generate_pool_warp_row_candidate(g, problem, *window);
  if (g.has("sliding-planes")) return generate_pool_planes_candidate(g, problem, *window);
  const bool vector = g.has("vector16-loads");
  const int unroll = vector ? g.knob("vector16-loads", "unroll") : g.knob("scalar-loads", "unroll");
  const int run = vector ? 4 * unroll : unroll;
  const bool stride = g.has("grid-stride");
  const int threads =
      stride ? g.knob("grid-stride", "threads") : g.knob("element-per-thread", "threads");
  int blocks_per_sm = stride ? g.knob("grid-stride", "blocks_per_sm") : 0;
  if (g.has("persistent-grid")) blocks_per_sm = g.knob("persistent-grid", "blocks_per_sm");
  const std::string store =
      vector
          ? R"(    if (aligned && ow0 + kRun <= w.out) {  // rows of whole float4s (w.out % 4 == 0)
#pragma unroll
      for (int q = 0; q < kRun / 4; ++q)
        store_out4(yr + ow0 + 4 * q, make_float4(result(acc[4 * q], ow0 + 4 * q, scale, w),
                                                 result(acc[4 * q + 1], ow0 + 4 * q + 1, scale, w),
                                                 result(acc[4 * q + 2], ow0 + 4 * q + 2, scale, w),
                                                 result(acc[4 * q + 3], ow0 + 4 * q + 3, scale, w)));
      continue;
    }
)"
          : "";
  const std::string grid = blocks_per_sm > 0
                               ? fmt::format("static_cast<long long>(sms) * {}", blocks_per_sm)
                               : fmt::format("(items + {} - 1) / {}", threads, threads);
  return fmt::format(
      R"(// Generated by kiln evolve for {problem}; do not edit.
// Genome {hash:016x}: {describe}
// Each thread computes runs of {run} consecutive outputs along the innermost axis.
{head}constexpr int kRun = {run};  // consecutive outputs per work item

{axis}
// kiln-device: begin
__device__ __forceinline__ float result(float acc, long long ow, float scale, const Axis& w) {{
  return kMax ? acc : acc / (scale * static_cast<float>(divisor(w, ow)));
}}

__global__ void __launch_bounds__({threads})
    pool_kernel(const float* __restrict__ x, float* __restrict__ y, long long planes, Axis d,
                Axis h, Axis w, bool aligned) {{
  const long long runs = (w.out + kRun - 1) / kRun;  // work items per output row
  const long long items = planes * d.out * h.out * runs;
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long item = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
       item < items; item += step) {{
    long long rest = item / runs;
    const long long ow0 = item % runs * kRun;
    const long long oh = rest % h.out;
    rest /= h.out;
    const long long od = rest % d.out;
    const long long plane = rest / d.out;
    const float* xp = x + plane * d.in * h.in * w.in;
    float* yr = y + ((plane * d.out + od) * h.out + oh) * w.out;
    float acc[kRun];
#pragma unroll
    for (int r = 0; r < kRun; ++r) acc[r] = kMax ? -INFINITY : 0.0f;
    for (int kd = 0; kd < (kDims >= 3 ? kKernel : 1); ++kd) {{
      const long long id = kDims >= 3 ? od * kStride - kPadding + kd * kDilation : 0;
      if (id < 0 || id >= d.in) continue;
      for (int kh = 0; kh < (kDims >= 2 ? kKernel : 1); ++kh) {{
        const long long ih = kDims >= 2 ? oh * kStride - kPadding + kh * kDilation : 0;
        if (ih < 0 || ih >= h.in) continue;
        const float* xr = xp + (id * h.in + ih) * w.in;
        for (int kw = 0; kw < kKernel; ++kw) {{
#pragma unroll
          for (int r = 0; r < kRun; ++r) {{
            const long long iw = (ow0 + r) * kStride - kPadding + kw * kDilation;
            if (ow0 + r < w.out && iw >= 0 && iw < w.in) {{
              const float v = xr[iw];
              acc[r] = kMax ? fmaxf(acc[r], v) : acc[r] + v;
            }}
          }}
        }}
      }}
    }}
    // The outer axes' part of the average's divisor (1 on axes not pooled).
    const float scale = kMax ? 1.0f
                             : static_cast<float>((kDims >= 3 ? divisor(d, od) : 1) *
                                                  (kDims >= 2 ? divisor(h, oh) : 1));
{store}#pragma unroll
    for (int r = 0; r < kRun; ++r)
      if (ow0 + r < w.out) store_out(yr + ow0 + r, result(acc[r], ow0 + r, scale, w));
  }}
}}
// kiln-device: end

{entry}  const Axis d{{depth, kDims >= 3 ? out_of(depth) : depth}};
  const Axis h{{height, kDims >= 2 ? out_of(height) : height}};
  const Axis w{{width, out_of(width)}};
  const long long planes = batch * channels;
  if (planes <= 0 || a->output_bytes[0] != static_cast<unsigned long long>(
                                              planes * d.out * h.out * w.out) * sizeof(float))
    return 3;
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
    return 4;
  (void)sms;
  const float* x = static_cast<const float*>(a->inputs[0]);
  float* y = static_cast<float*>(a->outputs[0]);
  // float4 stores need 16-byte rows and base.
  const bool aligned = w.out % 4 == 0 && reinterpret_cast<unsigned long long>(y) % 16 == 0;
  const long long items = planes * d.out * h.out * ((w.out + kRun - 1) / kRun);
  long long blocks = {grid};
  if (blocks < 1) blocks = 1;
  if (blocks > 2147483647LL) blocks = 2147483647LL;
  KILN_LAUNCH(pool_kernel, static_cast<unsigned>(blocks), {threads}, 0,
              static_cast<cudaStream_t>(a->stream), x, y, planes, d, h, w, aligned);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}}
// kiln-host: end
)",
      fmt::arg("axis", pool_axis_source()), fmt::arg("entry", pool_entry_opening()),
      fmt::arg("problem", problem), fmt::arg("hash", g.hash()), fmt::arg("describe", g.describe()),
      fmt::arg("run", run),
      fmt::arg("head", pool_window_constants(*window, g.has("cache-streaming"))),
      fmt::arg("threads", threads), fmt::arg("store", store), fmt::arg("grid", grid));
}

}  // namespace kiln::evolve
