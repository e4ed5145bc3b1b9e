/* Kernel launches that build two ways (issue 20's engine speed). A candidate source that marks its
 * device code with `// kiln-device: begin` / `// kiln-device: end` and its host-only code with
 * `// kiln-host: begin` / `// kiln-host: end`, and launches through the macros below, is still one
 * CUDA file for nvcc (the judge's own build, `kiln evolve export`). kiln's evolution engine may
 * instead build it split (src/bench/split_build.hpp): the device code by NVRTC into a cubin, the
 * host code by the host compiler with KILN_SPLIT_HOST defined, the cubin embedded in the library.
 * The split build skips nvcc's front ends, host pass and link: 2-5.4x less time per generated
 * kernel on the CPU machine, the more the smaller the kernel (NVRTC's own time grows with it).
 *
 *   KILN_LAUNCH(kernel, grid, block, shared_bytes, stream, args...);   a <<<>>> launch (a
 * statement) KILN_LAUNCH_EX(config_pointer, kernel, args...) cudaLaunchKernelEx: an error
 *   KILN_KERNEL(kernel)                    the kernel for cudaFuncSetAttribute, cudaOccupancy*, ...
 *
 * `kernel` is a name, or a template-id without a top-level comma (`strided<4>`). In a split build
 * the arguments are passed as their own types (no conversion to the parameters' as <<<>>> does):
 * pass variables of the parameters' exact types. A launch whose argument sizes differ from the
 * kernel's parameters fails (cudaGetLastError() reports it) with a message on stderr. */
#ifndef KILN_CANDIDATE_SPLIT_H
#define KILN_CANDIDATE_SPLIT_H

#if defined(__CUDACC_RTC__)
/* NVRTC has no C or C++ standard library: what generated device code takes from it. */
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
typedef unsigned long long uintptr_t;
/* Not constant expressions (NVRTC knows no __builtin_inff): fine in the code generated here. */
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif

#elif defined(KILN_SPLIT_HOST)
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdio>
#include <cstring>

/* Written by the split build into the library: the cubin, and the kernel names' table (pairs of
 * the expression as the host code writes it and NVRTC's lowered name, ended by an empty one). */
extern "C" __attribute__((visibility("hidden"))) const char kiln_split_cubin[];
extern "C" __attribute__((visibility("hidden"))) const char kiln_split_names[];

namespace {

/* The cubin, loaded once per process at the first kernel looked up. */
inline cudaLibrary_t kiln_split_library() {
  static cudaLibrary_t library = [] {
    cudaLibrary_t loaded = nullptr;
    if (cudaLibraryLoadData(&loaded, kiln_split_cubin, nullptr, nullptr, 0, nullptr, nullptr, 0) !=
        cudaSuccess) {
      std::fprintf(stderr, "kiln split build: cannot load the embedded cubin\n");
      return static_cast<cudaLibrary_t>(nullptr);
    }
    return loaded;
  }();
  return library;
}

/* The kernel the host code names `expression`, or null (a launch of null fails). */
inline const void* kiln_split_kernel(const char* expression) {
  const char* lowered = nullptr;
  for (const char* p = kiln_split_names; *p != '\0';) {
    const char* next = p + std::strlen(p) + 1;
    if (std::strcmp(p, expression) == 0) lowered = next;
    p = next + std::strlen(next) + 1;
  }
  cudaKernel_t kernel = nullptr;
  const cudaLibrary_t library = kiln_split_library();
  if (lowered == nullptr || library == nullptr ||
      cudaLibraryGetKernel(&kernel, library, lowered) != cudaSuccess) {
    std::fprintf(stderr, "kiln split build: no kernel %s in the cubin\n", expression);
    return nullptr;
  }
  return reinterpret_cast<const void*>(kernel);
}

/* Whether the kernel takes exactly `count` parameters of these sizes (said on stderr if not). A
 * runtime that cannot answer for a kernel handle leaves the launch unchecked, with a note. */
inline bool kiln_split_parameters_match(const void* kernel, const char* expression,
                                        const std::size_t* sizes, std::size_t count) {
  for (std::size_t i = 0; i <= count; ++i) {
    std::size_t offset = 0, size = 0;
    const cudaError_t asked = cudaFuncGetParamInfo(kernel, i, &offset, &size);
    if (asked != cudaSuccess) (void)cudaGetLastError(); /* past the last parameter, by design */
    if (asked != cudaSuccess && asked != cudaErrorInvalidValue) {
      std::fprintf(stderr, "kiln split build: %s: parameters not checked (%s)\n", expression,
                   cudaGetErrorString(asked));
      return true;
    }
    const bool exists = asked == cudaSuccess;
    if (i == count ? exists : !exists || size != sizes[i]) {
      std::fprintf(stderr,
                   "kiln split build: %s: argument %zu of %zu does not match the kernel's "
                   "parameter (kernel's size %zu, host's %zu)\n",
                   expression, i, count, exists ? size : 0, i < count ? sizes[i] : 0);
      return false;
    }
  }
  return true;
}

template <class... Args>
inline void** kiln_split_arguments(void** slots, const Args&... args) {
  std::size_t i = 0;
  ((slots[i++] = const_cast<void*>(static_cast<const void*>(&args))), ...);
  return slots;
}

/* One launch site: its kernel looked up and its parameters checked at its first launch. */
struct KilnSplitSite {
  const void* kernel = nullptr;
  bool checked = false, usable = false;
};

template <class... Args>
inline const void* kiln_split_checked(KilnSplitSite& site, const char* expression, const Args&...) {
  if (!site.checked) {
    site.checked = true;
    site.kernel = kiln_split_kernel(expression);
    const std::size_t sizes[sizeof...(Args) + 1] = {sizeof(Args)..., 0};
    site.usable = site.kernel != nullptr &&
                  kiln_split_parameters_match(site.kernel, expression, sizes, sizeof...(Args));
  }
  return site.usable ? site.kernel : nullptr;
}

template <class... Args>
inline cudaError_t kiln_split_launch(KilnSplitSite& site, const char* expression, dim3 grid,
                                     dim3 block, std::size_t shared_bytes, cudaStream_t stream,
                                     const Args&... args) {
  void* slots[sizeof...(Args) + 1] = {};
  /* A null kernel makes the launch itself fail, so that cudaGetLastError() reports it. */
  return cudaLaunchKernel(kiln_split_checked(site, expression, args...), grid, block,
                          kiln_split_arguments(slots, args...), shared_bytes, stream);
}

template <class... Args>
inline cudaError_t kiln_split_launch_ex(KilnSplitSite& site, const char* expression,
                                        const cudaLaunchConfig_t* config, const Args&... args) {
  void* slots[sizeof...(Args) + 1] = {};
  return cudaLaunchKernelExC(config, kiln_split_checked(site, expression, args...),
                             kiln_split_arguments(slots, args...));
}

}  // namespace

#define KILN_KERNEL(kernel)                                      \
  ([]() -> const void* {                                         \
    static const void* const found = kiln_split_kernel(#kernel); \
    return found;                                                \
  }())
#define KILN_LAUNCH(kernel, grid, block, shared_bytes, stream, ...)                              \
  do {                                                                                           \
    static KilnSplitSite kiln_site;                                                              \
    (void)kiln_split_launch(kiln_site, #kernel, grid, block, shared_bytes, stream, __VA_ARGS__); \
  } while (0)
#define KILN_LAUNCH_EX(config, kernel, ...)                               \
  ([&]() -> cudaError_t {                                                 \
    static KilnSplitSite kiln_site;                                       \
    return kiln_split_launch_ex(kiln_site, #kernel, config, __VA_ARGS__); \
  }())

#else /* nvcc: the file as one translation unit */
#define KILN_KERNEL(kernel) (kernel)
#define KILN_LAUNCH(kernel, grid, block, shared_bytes, stream, ...) \
  kernel<<<grid, block, shared_bytes, stream>>>(__VA_ARGS__)
#define KILN_LAUNCH_EX(config, kernel, ...) cudaLaunchKernelEx(config, kernel, __VA_ARGS__)
#endif

#endif /* KILN_CANDIDATE_SPLIT_H */
