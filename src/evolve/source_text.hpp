// Filling in generated CUDA sources (issue 20): the generators write their templates as plain
// raw strings with $NAME placeholders (C++ braces stay single, unlike fmt's) and substitute them.
#pragma once

#include <string>

namespace kiln::evolve {

// Every occurrence of `key` in `text` replaced by `value` (left to right, not rescanning the
// inserted text). Substitute longer keys first where one key is a prefix of another.
void replace_all(std::string& text, const std::string& key, const std::string& value);

// Device text shared by generators whose statistics take an exponential of d = x - max <= 0
// (softmax, cross entropy): kexp(d), on the special-function unit where the source's own
// `constexpr bool kFastExp` (the fast-exp strategy) says so.
inline constexpr const char* kExpDeviceText =
    R"(// exp(d) for d = x - max <= 0. fast-exp: 2^(d log2 e) on the special-function unit
// (ex2.approx.ftz: an FMUL and a MUFU against expf's nine instructions; relative error about
// 2^-22 plus d's rounding, results below 2^-126 flushed to zero).
__device__ __forceinline__ float kexp(float d) {
  if constexpr (kFastExp) {
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d * 1.4426950408889634f));
    return r;
  } else {
    return expf(d);
  }
}
)";

// The first lines of a generated unit that includes CUTLASS: its device-side asserts are
// function calls, and a call inside the main loop makes ptxas serialise every wgmma ("wgmma
// pipeline crossing function boundary", C7510; kiln's own library is built with NDEBUG by its
// Release flags, run-time candidates are not).
inline constexpr const char* kCutlassReleaseText =
    R"(// Release build of CUTLASS's device code: no asserts (a call in the main loop serialises wgmma).
#ifndef NDEBUG
#define NDEBUG
#endif
)";

}  // namespace kiln::evolve
