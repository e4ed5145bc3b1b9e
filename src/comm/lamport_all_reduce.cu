// The flag-in-data one-shot all-reduce (see lamport_all_reduce.hpp).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "comm/lamport_all_reduce.hpp"
#include "comm/peer_barrier.cuh"
#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/half_float.cuh"

namespace kiln::comm {
namespace {

constexpr unsigned short kEmpty16 = 0x8000;  // -0.0 in bf16 and fp16

__device__ __forceinline__ std::size_t slot_offset(const LamportArgs& a, int buffer, int source) {
  return (static_cast<std::size_t>(buffer) * a.world + source) * a.capacity;
}

// A 16-byte load that always goes to memory (the poll must see a peer's later store).
__device__ __forceinline__ uint4 load_volatile(const void* address) {
  uint4 v;
  asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(address));
  return v;
}

// The push and the emptying: stores the poll reads while they may be in flight (volatile, like
// the poll's loads, so that the two sides are not a data race in the PTX memory model).
__device__ __forceinline__ void store_volatile(void* address, const uint4& v) {
  asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(address), "r"(v.x),
               "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

__device__ __forceinline__ bool has_empty(const uint4& v) {
  const unsigned words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if ((words[i] & 0xffffu) == kEmpty16 || (words[i] >> 16) == kEmpty16) return true;
  }
  return false;
}

// -0.0 becomes +0.0, so that no element a rank sends reads as "not arrived".
__device__ __forceinline__ unsigned no_negative_zero(unsigned word) {
  if ((word & 0xffffu) == kEmpty16) word &= 0xffff0000u;
  if ((word >> 16) == kEmpty16) word &= 0x0000ffffu;
  return word;
}

template <typename T>
__global__ void __launch_bounds__(512) lamport_kernel(LamportArgs a) {
  const std::size_t first = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  // 1. Push this rank's vector into its slot of every rank's buffer (its own included).
  for (std::size_t v = first; v < a.vectors; v += step) {
    uint4 x = reinterpret_cast<const uint4*>(a.input)[v];
    x = make_uint4(no_negative_zero(x.x), no_negative_zero(x.y), no_negative_zero(x.z),
                   no_negative_zero(x.w));
    for (int r = 0; r < a.world; ++r)
      store_volatile(a.slots[r] + slot_offset(a, a.buffer, a.rank) + v * 16, x);
  }
  // 2. Wait for every rank's vector in the local slots, sum in rank order, round once, and empty
  //    the slots just read.
  constexpr int kElems = 8;
  for (std::size_t v = first; v < a.vectors; v += step) {
    float acc[kElems] = {};
    for (int source = 0; source < a.world; ++source) {
      const void* address = a.my_slots + slot_offset(a, a.buffer, source) + v * 16;
      uint4 x = load_volatile(address);
      if (has_empty(x)) {
        unsigned long long start;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
        do {
          x = load_volatile(address);
          unsigned long long now;
          asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
          if (now - start > kPeerBarrierTimeoutNs) __trap();  // a peer never wrote: fail loudly
        } while (has_empty(x));
      }
      const T* e = reinterpret_cast<const T*>(&x);
#pragma unroll
      for (int i = 0; i < kElems; ++i) acc[i] += core::to_float(e[i]);
    }
    uint4 packed;
    T* out = reinterpret_cast<T*>(&packed);
#pragma unroll
    for (int i = 0; i < kElems; ++i) out[i] = core::from_float<T>(acc[i]);
    reinterpret_cast<uint4*>(a.out)[v] = packed;
    for (int source = 0; source < a.world; ++source) {
      store_volatile(
          a.my_slots + slot_offset(a, a.buffer, source) + v * 16,
          make_uint4(kLamportEmptyWord, kLamportEmptyWord, kLamportEmptyWord, kLamportEmptyWord));
    }
  }
}

__global__ void fill_kernel(unsigned* words, std::size_t count) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    words[i] = kLamportEmptyWord;
}

}  // namespace

void launch_lamport_all_reduce(const LamportArgs& args, core::DType dtype, int blocks,
                               cudaStream_t stream) {
  if (dtype == core::DType::kBf16)
    lamport_kernel<__nv_bfloat16><<<blocks, 512, 0, stream>>>(args);
  else if (dtype == core::DType::kFp16)
    lamport_kernel<__half><<<blocks, 512, 0, stream>>>(args);
  else
    throw UsageError("Lamport all-reduce: bf16 or fp16 only (a 16-bit sentinel)");
  KILN_CUDA_CHECK_LAUNCH();
}

void fill_lamport_empty(void* buffer, std::size_t bytes, cudaStream_t stream) {
  const std::size_t words = bytes / 4;
  const int blocks = static_cast<int>(std::min<std::size_t>(1024, (words + 255) / 256 + 1));
  fill_kernel<<<blocks, 256, 0, stream>>>(static_cast<unsigned*>(buffer), words);
  KILN_CUDA_CHECK_LAUNCH();
}

}  // namespace kiln::comm
