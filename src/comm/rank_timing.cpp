// Timing across ranks (see rank_timing.hpp).
#include "comm/rank_timing.hpp"

#include <nccl.h>

#include "core/cuda_check.hpp"
#include "core/device_buffer.hpp"
#include "core/event_timer.hpp"

namespace kiln::comm {

std::vector<std::vector<float>> time_rounds_over_ranks(
    Communicator& comm, cudaStream_t stream, int variants,
    const std::function<void(int variant, int iteration)>& enqueue,
    const core::RoundsOptions& options, const std::string& what,
    const std::function<void(int round)>& between_rounds) {
  return core::time_rounds(
      stream, variants, enqueue, options, [&](cudaStream_t s) { comm.wait(s, what); },
      [&](std::vector<float>& us) { max_over_ranks(comm, us, stream); }, between_rounds);
}

std::vector<float> samples_over_ranks(Communicator& comm, cudaStream_t stream, int warmup,
                                      int iterations, const std::function<void(int)>& body,
                                      const std::string& what) {
  return time_rounds_over_ranks(
      comm, stream, 1, [&](int, int i) { body(i); }, {warmup, iterations, 1}, what)[0];
}

void max_over_ranks(Communicator& comm, std::vector<float>& values, cudaStream_t stream) {
  if (values.empty()) return;
  if (comm.size() == 1) {  // the values are the maximum; the stream is drained as below
    comm.wait(stream, "max reduction");
    return;
  }
  core::DeviceBuffer buffer(sizeof(float) * values.size());
  KILN_CUDA_CHECK(cudaMemcpyAsync(buffer.data(), values.data(), buffer.bytes(),
                                  cudaMemcpyHostToDevice, stream));
  comm.call("max reduction", [&] {
    return ncclAllReduce(buffer.data(), buffer.data(), values.size(), ncclFloat32, ncclMax,
                         comm.get(), stream);
  });
  comm.wait(stream, "max reduction");
  KILN_CUDA_CHECK(cudaMemcpy(values.data(), buffer.data(), buffer.bytes(), cudaMemcpyDeviceToHost));
}

double max_over_ranks(Communicator& comm, double value, cudaStream_t stream) {
  if (comm.size() == 1) {
    comm.wait(stream, "max reduction");
    return value;
  }
  core::DeviceBuffer buffer(sizeof(double));
  KILN_CUDA_CHECK(
      cudaMemcpyAsync(buffer.data(), &value, sizeof(double), cudaMemcpyHostToDevice, stream));
  comm.call("max reduction", [&] {
    return ncclAllReduce(buffer.data(), buffer.data(), 1, ncclFloat64, ncclMax, comm.get(), stream);
  });
  comm.wait(stream, "max reduction");
  KILN_CUDA_CHECK(cudaMemcpy(&value, buffer.data(), sizeof(double), cudaMemcpyDeviceToHost));
  return value;
}

}  // namespace kiln::comm
