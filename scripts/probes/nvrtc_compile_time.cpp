// Times NVRTC on the device code of a generated candidate (an sm_90a cubin, 5 runs): the measure
// behind the proposal to compile the evolution engine's kernels with NVRTC (issue 20's speed).
// Build: g++ -O2 -std=c++17 nvrtc_compile_time.cpp -I/usr/local/cuda/include
//        -L/usr/local/cuda/lib64 -lnvrtc -o nvrtc_compile_time
// Run:   ./nvrtc_compile_time device_code.cu   (the source without its host entry point)
#include <nvrtc.h>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
int main(int argc, char** argv) {
  std::ifstream in(argv[1]);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string src = ss.str();
  for (int r = 0; r < 5; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    nvrtcProgram p;
    nvrtcCreateProgram(&p, src.c_str(), "dev.cu", 0, nullptr, nullptr);
    const char* opts[] = {"--gpu-architecture=sm_90a", "-std=c++17", "-default-device"};
    const nvrtcResult res = nvrtcCompileProgram(p, 3, opts);
    size_t log_size = 0;
    nvrtcGetProgramLogSize(p, &log_size);
    std::string log(log_size, '\0');
    nvrtcGetProgramLog(p, log.data());
    size_t cubin = 0;
    if (res == NVRTC_SUCCESS) nvrtcGetCUBINSize(p, &cubin);
    nvrtcDestroyProgram(&p);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("run %d: %s, %.3f s, cubin %zu B%s%s\n", r, nvrtcGetErrorString(res), s, cubin,
                res == NVRTC_SUCCESS ? "" : "\n", res == NVRTC_SUCCESS ? "" : log.c_str());
  }
}
