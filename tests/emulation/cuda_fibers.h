// A CUDA block on the CPU for the scan family's generated device code (tests/cpu/
// evolve_scan_emulation_test.cpp): each thread of a block is a fiber (ucontext), run until it
// waits at a barrier; __syncwarp releases a warp when all its live threads wait there,
// __syncthreads the block; the warp shuffles go through a per-warp exchange array between two
// warp barriers. Enough CUDA for kiln's scan kernels (no cp.async, no atomics, no clusters), so
// that their index logic (partial chunks, unaligned rows, the prefetch ring, reverse, exclusive
// and masked scans) runs in CI, with AddressSanitizer watching every access. Included after the
// kernel's constants, before its device code.
#pragma once

#include <ucontext.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

struct emu_dim3 {
  unsigned x, y, z;
};
// 16-byte aligned as on the device, so that UBSan reports a vector access off 16 bytes.
struct alignas(16) float4 {
  float x, y, z, w;
};
struct __attribute__((aligned(4))) uchar4 {
  unsigned char x, y, z, w;
};
inline float4 make_float4(float a, float b, float c, float d) {
  return {a, b, c, d};
}
inline uchar4 make_uchar4(unsigned char a, unsigned char b, unsigned char c, unsigned char d) {
  return {a, b, c, d};
}

// Each fiber's stack: 256 KiB unless the harness asks for less (a harness that runs thousands of
// blocks of small kernels: the stacks are allocated and zeroed for every block).
#ifndef EMU_STACK_BYTES
#define EMU_STACK_BYTES (256 * 1024)
#endif

namespace emu {

enum State { kRunnable, kAtWarpBarrier, kAtBlockBarrier, kDone };
struct Fiber {
  ucontext_t context;
  std::vector<char> stack;
  State state = kRunnable;
};
inline std::vector<Fiber> fibers;
inline ucontext_t scheduler;
inline int current = 0;
inline emu_dim3 thread_index, block_index;
inline emu_dim3 grid_dim{1, 1, 1}, block_dim{1, 1, 1};  // set by the harness / run_block
inline float exchange[32][32];                          // [warp][lane]: the shuffles' values
inline std::function<void()> body;

inline void wait(State at) {
  fibers[current].state = at;
  swapcontext(&fibers[current].context, &scheduler);
}
inline void trampoline() {
  body();
  fibers[current].state = kDone;
  swapcontext(&fibers[current].context, &scheduler);
}

// Runs `kernel` as one block of `threads` threads (blockIdx set by the caller); a barrier that can
// never be released ends the process (a deadlock is a failure).
inline void run_block(int threads, std::function<void()> kernel) {
  body = std::move(kernel);
  block_dim = {static_cast<unsigned>(threads), 1, 1};
  fibers.clear();
  fibers.resize(threads);
  for (int i = 0; i < threads; ++i) {
    Fiber& f = fibers[i];
    f.stack.resize(EMU_STACK_BYTES);
    getcontext(&f.context);
    f.context.uc_stack.ss_sp = f.stack.data();
    f.context.uc_stack.ss_size = f.stack.size();
    f.context.uc_link = nullptr;
    makecontext(&f.context, trampoline, 0);
  }
  for (;;) {
    bool ran = false;
    for (int i = 0; i < threads; ++i)
      if (fibers[i].state == kRunnable) {
        current = i;
        thread_index = {static_cast<unsigned>(i), 0, 0};
        swapcontext(&scheduler, &fibers[i].context);
        ran = true;
      }
    if (ran) continue;
    bool all_done = true;
    for (const Fiber& f : fibers) all_done = all_done && f.state == kDone;
    if (all_done) return;
    bool released = false;
    for (int w = 0; w * 32 < threads; ++w) {  // a warp whose live threads all wait at __syncwarp
      int live = 0, waiting = 0;
      for (int i = w * 32; i < threads && i < w * 32 + 32; ++i) {
        live += fibers[i].state != kDone;
        waiting += fibers[i].state == kAtWarpBarrier;
      }
      if (live > 0 && live == waiting) {
        for (int i = w * 32; i < threads && i < w * 32 + 32; ++i)
          if (fibers[i].state == kAtWarpBarrier) fibers[i].state = kRunnable;
        released = true;
      }
    }
    if (!released) {  // the block's live threads all at __syncthreads
      int live = 0, waiting = 0;
      for (const Fiber& f : fibers) {
        live += f.state != kDone;
        waiting += f.state == kAtBlockBarrier;
      }
      if (live > 0 && live == waiting) {
        for (Fiber& f : fibers)
          if (f.state == kAtBlockBarrier) f.state = kRunnable;
        released = true;
      }
    }
    if (!released) {
      std::fprintf(stderr, "deadlock: no barrier can be released\n");
      std::exit(9);
    }
  }
}

inline float shuffle(float v, int from_lane, bool valid) {
  const int lane = static_cast<int>(thread_index.x % 32),
            warp = static_cast<int>(thread_index.x / 32);
  exchange[warp][lane] = v;
  wait(kAtWarpBarrier);
  const float r = valid ? exchange[warp][from_lane] : v;
  wait(kAtWarpBarrier);
  return r;
}

}  // namespace emu

#define threadIdx emu::thread_index
#define blockIdx emu::block_index
#define gridDim emu::grid_dim
#define blockDim emu::block_dim
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__ __restrict
#define __shared__ static
inline unsigned __float_as_uint(float v) {
  unsigned bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}
inline void __syncthreads() {
  emu::wait(emu::kAtBlockBarrier);
}
inline void __syncwarp() {
  emu::wait(emu::kAtWarpBarrier);
}
inline float __shfl_up_sync(unsigned, float v, int d) {
  const int lane = static_cast<int>(emu::thread_index.x % 32);
  return emu::shuffle(v, lane - d, lane >= d);
}
inline float __shfl_down_sync(unsigned, float v, int d) {
  const int lane = static_cast<int>(emu::thread_index.x % 32);
  return emu::shuffle(v, lane + d, lane + d < 32);
}
inline float __shfl_sync(unsigned, float v, int source) {
  return emu::shuffle(v, source, true);
}
template <typename T>
inline T __ldcs(const T* p) {
  return *p;
}
template <typename T>
inline void __stcs(T* p, T v) {
  *p = v;
}
template <typename T>
inline T __ldg(const T* p) {
  return *p;
}
