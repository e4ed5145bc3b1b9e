// Timing across ranks (see rank_timing.hpp).
#include "comm/rank_timing.hpp"

#include <nccl.h>

#include "core/cuda_check.hpp"
#include "core/device_buffer.hpp"
#include "core/event_timer.hpp"

namespace kiln::comm {

std::vector<float> samples_over_ranks(Communicator& comm, cudaStream_t stream, int warmup,
                                      int iterations, const std::function<void(int)>& body,
                                      const std::string& what) {
  std::vector<float> us = core::time_iterations(stream, {warmup, iterations}, body,
                                                [&](cudaStream_t s) { comm.wait(s, what); });
  for (float& value : us) value *= 1000.0f;
  max_over_ranks(comm, us, stream);
  return us;
}

void max_over_ranks(Communicator& comm, std::vector<float>& values, cudaStream_t stream) {
  if (values.empty()) return;
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
