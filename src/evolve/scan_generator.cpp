// Scan-family code generation (see scan_generator.hpp). The building blocks:
//  - work mapping: row-per-warp (`warps_per_block` rows per block, a warp each) or row-per-block
//    (`threads` threads on one row);
//  - load path: scalar-loads (`unroll` consecutive elements per thread and chunk),
//    vector16-loads (`unroll` float4 per thread and chunk; element by element where the row is
//    not 16-byte aligned or the chunk is partial) or cp-async-pipeline (8 elements per thread and
//    chunk copied to shared memory by cp.async `stages` - 1 chunks ahead of the one being scanned:
//    a row's chunks are otherwise loaded one at a time, each after the previous one's scan, and a
//    few KB in flight per block leaves HBM short of requests);
//  - prefetch (optional, scalar or vector loads): register-prefetch keeps the loads of the next
//    `chunks` chunks in flight in registers while one is scanned (no shared memory, no copy);
//  - cache policy (optional): cache-streaming marks every load and store evict-first;
//  - reduction: shared-tree (the threads' totals scanned in shared memory, Hillis-Steele) or
//    warp-shuffle (scanned with __shfl_up/down inside each warp, warp totals through shared
//    memory).
// The scan order is the row's order, or the reverse for suffix sums: a thread's place in it is
// `r`, its lane's `lane_r`, its warp's `warp_r`. Every value combines in a fixed order, so the
// output is deterministic (the judge checks).
#include "evolve/scan_generator.hpp"

#include <fmt/format.h>

#include <map>

#include "core/error.hpp"

namespace kiln::evolve {

std::optional<ScanKind> scan_kind_of(const std::string& problem) {
  static const std::map<std::string, ScanKind> kinds = {
      {"kb1-89-cumsum", {"sum", false, false, false}},
      {"kb1-90-cumprod", {"prod", false, false, false}},
      {"kb1-91-cumsum-reverse", {"sum", true, false, false}},
      {"kb1-92-cumsum-exclusive", {"sum", false, true, false}},
      {"kb1-93-masked-cumsum", {"sum", false, false, true}}};
  const auto it = kinds.find(problem);
  if (it == kinds.end()) return std::nullopt;
  return it->second;
}

const StrategySet& scan_generated_strategies() {
  static const StrategySet generated = {"scalar-loads",      "vector16-loads", "cp-async-pipeline",
                                        "register-prefetch", "row-per-warp",   "row-per-block",
                                        "shared-tree",       "warp-shuffle",   "cache-streaming"};
  return generated;
}

namespace {

// team_exclusive(total, r, scratch, &chunk_total): the combine of the totals of the threads
// before `r` in scan order, and of all of them.
std::string shared_tree_team_scan() {
  return R"(// The threads' totals scanned in shared memory (Hillis-Steele), in scan order.
__device__ __forceinline__ float team_exclusive(float total, int r, float* s, float* chunk_total) {
  s[r] = total;
  team_sync();
  for (int d = 1; d < kTeam; d <<= 1) {
    const float earlier = r >= d ? s[r - d] : kIdentity;
    team_sync();
    s[r] = combine(earlier, s[r]);
    team_sync();
  }
  const float before = r > 0 ? s[r - 1] : kIdentity;
  *chunk_total = s[kTeam - 1];
  team_sync();  // s is rewritten by the next chunk
  return before;
}
)";
}

std::string warp_shuffle_team_scan() {
  return R"(// Inclusive scan over the lanes of a warp in scan order (lane_r), by shuffles.
__device__ __forceinline__ float warp_inclusive(float v, int lane_r) {
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const float other = kReverse ? __shfl_down_sync(0xffffffffu, v, d)
                                 : __shfl_up_sync(0xffffffffu, v, d);
    if (lane_r >= d) v = combine(other, v);
  }
  return v;
}

// The threads' totals scanned by shuffles inside each warp; the warps' totals through shared
// memory, scanned by the first warp.
__device__ __forceinline__ float team_exclusive(float total, int r, float* s, float* chunk_total) {
  const int lane_r = r % 32, warp_r = r / 32;
  const float inclusive = warp_inclusive(total, lane_r);
  float before = kReverse ? __shfl_down_sync(0xffffffffu, inclusive, 1)
                          : __shfl_up_sync(0xffffffffu, inclusive, 1);
  if (lane_r == 0) before = kIdentity;
  const int last_lane = kReverse ? 0 : 31;  // the lane last in scan order
  const float warp_total = __shfl_sync(0xffffffffu, inclusive, last_lane);
  if (kTeam == 32) {
    *chunk_total = warp_total;
    return before;
  }
  constexpr int kWarps = kTeam / 32;
  if (lane_r == 31) s[warp_r] = warp_total;
  team_sync();
  if (warp_r == 0) {  // the first warp in scan order scans the warp totals (kWarps <= 32)
    const float v = warp_inclusive(lane_r < kWarps ? s[lane_r] : kIdentity, lane_r);
    if (lane_r < kWarps) s[32 + lane_r] = v;
  }
  team_sync();
  if (warp_r > 0) before = combine(s[32 + warp_r - 1], before);
  *chunk_total = s[32 + kWarps - 1];
  team_sync();  // s is rewritten by the next chunk
  return before;
}
)";
}

// load_x / store_y: plain accesses, or (cache-streaming) marked evict-first: every element is
// read once and written once, so nothing the scan touches is worth keeping in L2.
std::string streaming_helpers(bool streaming) {
  if (!streaming)
    return R"(template <typename T>
__device__ __forceinline__ T load_x(const T* p) { return *p; }
template <typename T>
__device__ __forceinline__ void store_y(T* p, T v) { *p = v; }

)";
  return R"(// cache-streaming: evict-first loads and stores (ld.global.cs / st.global.cs).
template <typename T>
__device__ __forceinline__ T load_x(const T* p) { return __ldcs(p); }
template <typename T>
__device__ __forceinline__ void store_y(T* p, T v) { __stcs(p, v); }

)";
}

// Loads this thread's elements of the chunk into v[] (identity past the chunk's end; the masked
// scan's mask applied as they arrive: the plain loop waits for them at once anyway).
std::string load_block(bool vector) {
  if (!vector) {
    return R"(#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const long long j = mine + i;
      v[i] = j < end ? element(xr, mr, j) : kIdentity;
    }
)";
  }
  return R"(    if (aligned && mine + kPerThread <= end) {  // whole float4s (rows and chunks start at multiples of 4)
#pragma unroll
      for (int q = 0; q < kPerThread / 4; ++q) {
        const float4 f = load_x(reinterpret_cast<const float4*>(xr + mine + 4 * q));
        v[4 * q] = f.x; v[4 * q + 1] = f.y; v[4 * q + 2] = f.z; v[4 * q + 3] = f.w;
        if (kMasked) {
          const uchar4 m = load_x(reinterpret_cast<const uchar4*>(mr + mine + 4 * q));
          v[4 * q] *= m.x; v[4 * q + 1] *= m.y; v[4 * q + 2] *= m.z; v[4 * q + 3] *= m.w;
        }
      }
    } else {
#pragma unroll
      for (int i = 0; i < kPerThread; ++i) {
        const long long j = mine + i;
        v[i] = j < end ? element(xr, mr, j) : kIdentity;
      }
    }
)";
}

std::string store_block(bool vector) {
  if (!vector) {
    return R"(#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const long long j = mine + i;
      if (j < end) store_y(yr + j, combine(base, v[i]));
    }
)";
  }
  return R"(    if (aligned && mine + kPerThread <= end) {
#pragma unroll
      for (int q = 0; q < kPerThread / 4; ++q) {
        store_y(reinterpret_cast<float4*>(yr + mine + 4 * q),
                make_float4(combine(base, v[4 * q]), combine(base, v[4 * q + 1]),
                            combine(base, v[4 * q + 2]), combine(base, v[4 * q + 3])));
      }
    } else {
#pragma unroll
      for (int i = 0; i < kPerThread; ++i) {
        const long long j = mine + i;
        if (j < end) store_y(yr + j, combine(base, v[i]));
      }
    }
)";
}

// cp-async-pipeline's copies (global -> this thread's slots of the stage in shared memory).
std::string staged_helpers() {
  return R"(
// cp-async-pipeline: each thread copies its own elements of a chunk into its own slot of the
// stage and reads back only those, so waiting for its own copies orders them (no barrier).
__device__ __forceinline__ void copy16(void* to, const void* from) {
  const unsigned shared_to = static_cast<unsigned>(__cvta_generic_to_shared(to));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(shared_to), "l"(from) : "memory");
}
__device__ __forceinline__ void copy4(void* to, const void* from) {
  const unsigned shared_to = static_cast<unsigned>(__cvta_generic_to_shared(to));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(shared_to), "l"(from) : "memory");
}
__device__ __forceinline__ void commit_copies() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void wait_copies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kStages - 1) : "memory");
}
)";
}

// The row's loop over its chunks. Plain: each chunk loaded, scanned and stored in turn.
std::string plain_loop(bool vector) {
  return fmt::format(
      R"(  float carry = kIdentity;  // the combine of every element before this chunk, in scan order
  for (long long done = 0; done < cols; done += kChunk) {{
    // The chunk: the next kChunk elements in scan order, [lo, end) of the row.
    const long long lo = kReverse ? (cols - done > kChunk ? cols - done - kChunk : 0) : done;
    const long long end = kReverse ? cols - done : (done + kChunk < cols ? done + kChunk : cols);
    const long long mine = lo + static_cast<long long>(t) * kPerThread;
    float v[kPerThread];
{load}
)",
      fmt::arg("load", load_block(vector)));
}

// The bounds of a row's chunk c, a lambda.
std::string chunk_bounds() {
  return R"(  // Chunk c: the c-th kChunk elements in scan order, [lo, end) of the row.
  const auto bounds = [&](long long c, long long& lo, long long& end) {
    const long long done = c * kChunk;
    lo = kReverse ? (cols - done > kChunk ? cols - done - kChunk : 0) : done;
    end = kReverse ? cols - done : (done + kChunk < cols ? done + kChunk : cols);
  };
)";
}

// register-prefetch: a ring of kAhead + 1 chunks in registers. Slot s holds the chunks c with
// c % (kAhead + 1) == s, so no value ever moves between slots: a register copy of a prefetched
// chunk waits for its load at the copy, which the compiler hoists above the next scan (review of
// 3e8d4ef: the first form shifted `ahead[]` down each iteration and hid almost no latency).
// Before chunk c is scanned, chunk c + kAhead is issued into the slot chunk c - 1 left; the
// slots' loop is unrolled, so every slot index is a constant.
std::string prefetch_loop(bool vector) {
  // The masked scan keeps the mask's bytes as loaded (a uchar4 per 4 elements, or a byte per
  // element) until the chunk is scanned: multiplying at the load would wait for the prefetch
  // there (review of 3e8d4ef).
  // A 32-bit word per 4 elements (its bytes taken apart only at the scan: uchar4 fields were
  // split into byte registers right after the load, which waited for it).
  const std::string mask_type = vector ? "unsigned int" : "unsigned char";
  const std::string mask_count = vector ? "kPerThread / 4" : "kPerThread";
  const std::string load =
      vector
          ? R"(    if (aligned && mine + kPerThread <= end) {  // whole float4s (rows and chunks start at multiples of 4)
#pragma unroll
      for (int q = 0; q < kPerThread / 4; ++q) {
        const float4 f = load_x(reinterpret_cast<const float4*>(xr + mine + 4 * q));
        to[4 * q] = f.x; to[4 * q + 1] = f.y; to[4 * q + 2] = f.z; to[4 * q + 3] = f.w;
        if (kMasked) tm[q] = load_x(reinterpret_cast<const unsigned int*>(mr + mine + 4 * q));
      }
    } else {  // element by element; past the end the identity (its mask byte 1)
#pragma unroll
      for (int i = 0; i < kPerThread; ++i) to[i] = mine + i < end ? load_x(xr + mine + i) : kIdentity;
      if (kMasked) {
        const auto byte = [&](int i) -> unsigned char { return mine + i < end ? load_x(mr + mine + i) : 1; };
#pragma unroll
        for (int q = 0; q < kPerThread / 4; ++q)
          tm[q] = byte(4 * q) | byte(4 * q + 1) << 8 | byte(4 * q + 2) << 16 |
                  static_cast<unsigned int>(byte(4 * q + 3)) << 24;
      }
    }
)"
          : R"(#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const long long j = mine + i;
      to[i] = j < end ? load_x(xr + j) : kIdentity;
      if (kMasked) tm[i] = j < end ? load_x(mr + j) : 1;
    }
)";
  const std::string apply = vector
                                ? R"(    if (kMasked) {  // the mask, now that the chunk is needed
#pragma unroll
      for (int q = 0; q < kPerThread / 4; ++q) {
        const unsigned int m = mring[s][q];  // little-endian: element 4q in the low byte
        v[4 * q] *= m & 0xffu; v[4 * q + 1] *= m >> 8 & 0xffu;
        v[4 * q + 2] *= m >> 16 & 0xffu; v[4 * q + 3] *= m >> 24;
      }
    }
)"
                                : R"(    if (kMasked) {  // the mask, now that the chunk is needed
#pragma unroll
      for (int i = 0; i < kPerThread; ++i) v[i] *= mring[s][i];
    }
)";
  return fmt::format(
      R"(  const long long chunks = (cols + kChunk - 1) / kChunk;
{bounds}  // The loads of chunk c into to[] (and its mask bytes into tm[]), nothing waiting for them.
  const auto fetch = [&](long long c, float* to, {mask_type}* tm) {{
    long long lo, end;
    bounds(c, lo, end);
    const long long mine = lo + static_cast<long long>(t) * kPerThread;
{load}  }};
  float ring[kAhead + 1][kPerThread];  // chunk c in slot c % (kAhead + 1)
  {mask_type} mring[kAhead + 1][kMasked ? {mask_count} : 1];  // its mask bytes (masked scan)
#pragma unroll
  for (int s = 0; s < kAhead; ++s)
    if (s < chunks) fetch(s, ring[s], mring[s]);
  float carry = kIdentity;  // the combine of every element before this chunk, in scan order
  for (long long c0 = 0; c0 < chunks; c0 += kAhead + 1) {{
#pragma unroll
   for (int s = 0; s <= kAhead; ++s) {{
    const long long c = c0 + s;
    if (c < chunks) {{
    const int next = (s + kAhead) % (kAhead + 1);  // the slot chunk c - 1 left
    if (c + kAhead < chunks) fetch(c + kAhead, ring[next], mring[next]);
    float* const v = ring[s];  // the chunk being scanned
    long long lo, end;
    bounds(c, lo, end);
    const long long mine = lo + static_cast<long long>(t) * kPerThread;
{apply})",
      fmt::arg("bounds", chunk_bounds()), fmt::arg("load", load), fmt::arg("apply", apply),
      fmt::arg("mask_type", mask_type), fmt::arg("mask_count", mask_count));
}

// Closes the ring's chunk (c < chunks) and its slots' loop.
std::string prefetch_tail() {
  return "    }  // c < chunks\n   }  // the ring's slots\n";
}

// cp-async-pipeline: chunk c + kStages - 1 is copied while chunk c is scanned; every iteration
// commits one group (empty past the row's end), so waiting until kStages - 1 are pending means
// chunk c has landed.
std::string staged_loop() {
  return R"(  extern __shared__ __align__(16) unsigned char staged[];
  float* const xs = reinterpret_cast<float*>(staged) + static_cast<long long>(team) * kStages * kChunk;
  unsigned char* const ms = staged + sizeof(float) * kTeamsPerBlock * kStages * kChunk +
                            static_cast<long long>(team) * kStages * kChunk;
  const long long chunks = (cols + kChunk - 1) / kChunk;
)" + chunk_bounds() +
         R"(  const auto issue = [&](long long c) {
    long long lo, end;
    bounds(c, lo, end);
    const long long mine = lo + static_cast<long long>(t) * kPerThread;
    const long long slot = (c % kStages) * kChunk + static_cast<long long>(t) * kPerThread;
    if (aligned && mine + kPerThread <= end) {  // whole 16-byte pieces (the mask's 4 bytes each)
#pragma unroll
      for (int q = 0; q < kPerThread / 4; ++q) {
        copy16(xs + slot + 4 * q, xr + mine + 4 * q);
        if (kMasked) copy4(ms + slot + 4 * q, mr + mine + 4 * q);
      }
    } else {  // element by element; the mask is then read at the scan
#pragma unroll
      for (int i = 0; i < kPerThread; ++i)
        if (mine + i < end) copy4(xs + slot + i, xr + mine + i);
    }
  };
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < chunks) issue(s);
    commit_copies();
  }
  float carry = kIdentity;  // the combine of every element before this chunk, in scan order
  for (long long c = 0; c < chunks; ++c) {
    if (c + kStages - 1 < chunks) issue(c + kStages - 1);
    commit_copies();
    wait_copies();
    long long lo, end;
    bounds(c, lo, end);
    const long long mine = lo + static_cast<long long>(t) * kPerThread;
    const long long slot = (c % kStages) * kChunk + static_cast<long long>(t) * kPerThread;
    float v[kPerThread];
    if (aligned && mine + kPerThread <= end) {
#pragma unroll
      for (int q = 0; q < kPerThread / 4; ++q) {
        const float4 f = *reinterpret_cast<const float4*>(xs + slot + 4 * q);
        v[4 * q] = f.x; v[4 * q + 1] = f.y; v[4 * q + 2] = f.z; v[4 * q + 3] = f.w;
        if (kMasked) {
          const uchar4 m = *reinterpret_cast<const uchar4*>(ms + slot + 4 * q);
          v[4 * q] *= m.x; v[4 * q + 1] *= m.y; v[4 * q + 2] *= m.z; v[4 * q + 3] *= m.w;
        }
      }
    } else {
#pragma unroll
      for (int i = 0; i < kPerThread; ++i) {
        const long long j = mine + i;
        v[i] = j < end ? (kMasked ? xs[slot + i] * static_cast<float>(mr[j]) : xs[slot + i]) : kIdentity;
      }
    }
)";
}

}  // namespace

std::string generate_scan_candidate(const Genome& g, const std::string& problem) {
  const std::optional<ScanKind> kind = scan_kind_of(problem);
  if (!kind) throw UsageError(fmt::format("{}: not a cumulative (scan) problem", problem));
  require_translatable(g, Family::kScan, scan_generated_strategies(), "scan");
  const bool staged = g.has("cp-async-pipeline");
  const bool prefetch = g.has("register-prefetch");
  const bool streaming = g.has("cache-streaming");
  const bool vector = g.has("vector16-loads");
  const int unroll = staged   ? 0
                     : vector ? g.knob("vector16-loads", "unroll")
                              : g.knob("scalar-loads", "unroll");
  const int per_thread = staged ? 8 : vector ? 4 * unroll : unroll;
  const int stages = staged ? g.knob("cp-async-pipeline", "stages") : 1;
  const bool per_warp = g.has("row-per-warp");
  const int team = per_warp ? 32 : g.knob("row-per-block", "threads");
  const int teams_per_block = per_warp ? g.knob("row-per-warp", "warps_per_block") : 1;
  const bool shuffle = g.has("warp-shuffle");
  const bool prod = kind->op == "prod";
  return fmt::format(
      R"(// Generated by kiln evolve for {problem}; do not edit.
// Genome {hash:016x}: {describe}
// A team of {team} threads scans each row in chunks of {team} x {per_thread} elements, each thread
// {per_thread} consecutive ones, carrying the row's running {op} from chunk to chunk.
// kiln-host: begin
#include <cuda_runtime.h>

#include <cstring>

#include "kiln/candidate.h"
// kiln-host: end
#include "kiln/candidate_split.h"

constexpr int kTeam = {team};          // threads on one row
constexpr int kTeamsPerBlock = {teams_per_block};  // rows per block
constexpr int kPerThread = {per_thread};     // consecutive elements per thread and chunk
constexpr bool kReverse = {reverse};   // suffix scan: the row from its end
constexpr bool kExclusive = {exclusive};  // y[j] leaves x[j] out
constexpr bool kMasked = {masked};    // x * mask
constexpr float kIdentity = {identity};
{stages_line}{ahead_line}
// kiln-device: begin
__device__ __forceinline__ float combine(float a, float b) {{ return a {combine_op} b; }}

__device__ __forceinline__ void team_sync() {{
  if (kTeam == 32)
    __syncwarp();
  else
    __syncthreads();
}}

{streaming_helpers}__device__ __forceinline__ float element(const float* xr, const unsigned char* mr, long long j) {{
  return kMasked ? load_x(xr + j) * static_cast<float>(load_x(mr + j)) : load_x(xr + j);
}}

{team_scan}{staged_helpers}
__global__ void __launch_bounds__(kTeam * kTeamsPerBlock)
    scan_kernel(const float* __restrict__ x, const unsigned char* __restrict__ mask,
                float* __restrict__ y, long long rows, long long cols, bool aligned) {{
  // Per team: the team scan's scratch (warp-shuffle: warp totals, then their scan).
  __shared__ float scratch[kTeamsPerBlock][kTeam > 64 ? kTeam : 64];
  const int team = threadIdx.x / kTeam, t = threadIdx.x % kTeam;
  const long long row = static_cast<long long>(blockIdx.x) * kTeamsPerBlock + team;
  if (row >= rows) return;  // a whole team leaves together (row-per-block: the whole block)
  const float* xr = x + row * cols;
  const unsigned char* mr = kMasked ? mask + row * cols : nullptr;
  float* yr = y + row * cols;
  const int r = kReverse ? kTeam - 1 - t : t;  // this thread's place in scan order
  constexpr long long kChunk = static_cast<long long>(kTeam) * kPerThread;
{loop}    // This thread's run, inclusive (or exclusive) in scan order, and its total.
    float run = kIdentity;
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {{
      const int i = kReverse ? kPerThread - 1 - k : k;
      const float next = combine(run, v[i]);
      v[i] = kExclusive ? run : next;
      run = next;
    }}
    float chunk_total;
    const float before = team_exclusive(run, r, scratch[team], &chunk_total);
    const float base = combine(carry, before);
{store}
    carry = combine(carry, chunk_total);
{loop_tail}  }}
}}
// kiln-device: end

// kiln-host: begin
extern "C" int kiln_candidate_abi_version(void) {{ return KILN_CANDIDATE_ABI_VERSION; }}

extern "C" int kiln_candidate_run(const KilnCandidateArgs* a) {{
  if (a->num_inputs < (kMasked ? 2 : 1) || a->num_outputs < 1 || a->dtype != KILN_FP32) return 2;
  long long rows = 0, cols = 0;
  for (int i = 0; i < a->num_dims; ++i) {{
    if (std::strcmp(a->dim_names[i], "rows") == 0) rows = a->dims[i];
    if (std::strcmp(a->dim_names[i], "cols") == 0) cols = a->dims[i];
  }}
  if (rows <= 0 || cols <= 0 ||
      a->output_bytes[0] != static_cast<unsigned long long>(rows * cols) * sizeof(float))
    return 3;
  const float* x = static_cast<const float*>(a->inputs[0]);
  const unsigned char* mask = kMasked ? static_cast<const unsigned char*>(a->inputs[1]) : nullptr;
  float* y = static_cast<float*>(a->outputs[0]);
  // float4 access needs 16-byte rows (cols % 4) and bases; the mask's uchar4 4-byte ones.
  const bool aligned = cols % 4 == 0 && reinterpret_cast<unsigned long long>(x) % 16 == 0 &&
                       reinterpret_cast<unsigned long long>(y) % 16 == 0 &&
                       (!kMasked || reinterpret_cast<unsigned long long>(mask) % 4 == 0);
  const long long blocks = (rows + kTeamsPerBlock - 1) / kTeamsPerBlock;
  if (blocks > 2147483647LL) return 4;
{set_shared}  KILN_LAUNCH(scan_kernel, static_cast<unsigned>(blocks), kTeam * kTeamsPerBlock, {shared_bytes},
              static_cast<cudaStream_t>(a->stream), x, mask, y, rows, cols, aligned);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}}
// kiln-host: end
)",
      fmt::arg("problem", problem), fmt::arg("hash", g.hash()), fmt::arg("describe", g.describe()),
      fmt::arg("team", team), fmt::arg("teams_per_block", teams_per_block),
      fmt::arg("per_thread", per_thread), fmt::arg("op", kind->op),
      fmt::arg("reverse", kind->reverse), fmt::arg("exclusive", kind->exclusive),
      fmt::arg("masked", kind->masked), fmt::arg("identity", prod ? "1.0f" : "0.0f"),
      fmt::arg("combine_op", prod ? "*" : "+"),
      fmt::arg("team_scan", shuffle ? warp_shuffle_team_scan() : shared_tree_team_scan()),
      fmt::arg("loop", staged     ? staged_loop()
                       : prefetch ? prefetch_loop(vector)
                                  : plain_loop(vector)),
      fmt::arg("loop_tail", prefetch ? prefetch_tail() : ""),
      fmt::arg("streaming_helpers", streaming_helpers(streaming)),
      fmt::arg("ahead_line",
               prefetch ? fmt::format("constexpr int kAhead = {};  // chunks loaded ahead of the "
                                      "one scanned (register-prefetch)\n",
                                      g.knob("register-prefetch", "chunks"))
                        : ""),
      fmt::arg("store", store_block(vector || staged)),
      fmt::arg("staged_helpers", staged ? staged_helpers() : ""),
      fmt::arg("stages_line",
               staged ? fmt::format("constexpr int kStages = {};  // chunks in flight, the one "
                                    "scanned included\n",
                                    stages)
                      : ""),
      fmt::arg(
          "set_shared",
          staged ? "  // cp-async-pipeline's stage: kStages chunks a row (and their mask "
                   "bytes).\n"
                   "  const int shared_bytes =\n"
                   "      kTeamsPerBlock * kStages * static_cast<int>(kTeam * kPerThread) *\n"
                   "      static_cast<int>(sizeof(float) + (kMasked ? 1 : 0));\n"
                   "  // Asked every time: the static scratch counts against the 48 KiB a launch\n"
                   "  // gets without it (stages 3 x 512 threads: 48 KiB dynamic + 2 KiB).\n"
                   "  if (cudaFuncSetAttribute(KILN_KERNEL(scan_kernel),\n"
                   "                           cudaFuncAttributeMaxDynamicSharedMemorySize,\n"
                   "                           shared_bytes) != cudaSuccess)\n"
                   "    return 1;\n"
                 : ""),
      fmt::arg("shared_bytes", staged ? "shared_bytes" : "0"));
}

}  // namespace kiln::evolve
