// Signaling GEMM kernels: bf16, weights stored N×K (C = A·Bᵀ).
#include "overlap/signaling_gemm_impl.cuh"

namespace kiln::overlap::device {
std::unique_ptr<SignalingGemm> make_bf16_nk(const GemmConfig& config) {
  return make_configured_gemm<cutlass::bfloat16_t, WeightLayout::kNK>(config);
}
}  // namespace kiln::overlap::device

#ifdef KILN_MAINLOOP_TRACE
// Diagnostic build only: the ping-pong main loops' clock records (sm90_mainloop_trace.cuh).
extern "C" __attribute__((visibility("default"))) long long kiln_mainloop_trace_bf16_nk(
    void* host, unsigned long long bytes) {
  return kiln::overlap::device::fetch_mainloop_trace(host, bytes);
}
// Sets the probe switches of sm90_mainloop_trace.cuh (0: none); returns 0, or -1 on failure.
extern "C" __attribute__((visibility("default"))) int kiln_mainloop_trace_probe_bf16_nk(int probe) {
  return kiln::overlap::device::set_trace_probe(probe) ? 0 : -1;
}
#endif
