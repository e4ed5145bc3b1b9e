// Does an NVRTC compile for a real architecture (sm_90a, as kiln evolve's split build asks)
// initialize the CUDA driver in the calling process? If it does, ranks forked afterwards cannot use
// the GPU. Build: g++ -std=c++17 -I/usr/local/cuda/include nvrtc_driver_probe.cpp
//   -L/usr/local/cuda/lib64 -lnvrtc -ldl
#include <dlfcn.h>
#include <nvrtc.h>

#include <cstdio>

static const char* driver_state() {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (driver == nullptr) return "libcuda not loaded";
  auto get_current = reinterpret_cast<int (*)(void**)>(dlsym(driver, "cuCtxGetCurrent"));
  void* context = nullptr;
  const int rc = get_current ? get_current(&context) : -1;
  dlclose(driver);
  return rc == 0 ? "libcuda loaded, cuInit called" : "libcuda loaded, not initialized";
}

int main() {
  std::printf("before NVRTC: %s\n", driver_state());
  nvrtcProgram program;
  nvrtcCreateProgram(&program, "__global__ void k(int* p) { *p = 1; }", "k.cu", 0, nullptr,
                     nullptr);
  std::printf("after nvrtcCreateProgram: %s\n", driver_state());
  const char* options[] = {"-arch=sm_90a"};
  const nvrtcResult r = nvrtcCompileProgram(program, 1, options);
  std::printf("nvrtcCompileProgram: %s; after it: %s\n", nvrtcGetErrorString(r), driver_state());
  size_t size = 0;
  nvrtcGetCUBINSize(program, &size);
  std::printf("cubin %zu bytes; after nvrtcGetCUBINSize: %s\n", size, driver_state());
  nvrtcDestroyProgram(&program);
  return 0;
}
