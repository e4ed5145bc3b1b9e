// The per-rank run of `kiln bench collective`.
#include <fmt/format.h>
#include <nccl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>

#include "benchmarks/collective/bus_bandwidth.hpp"
#include "benchmarks/collective/collective_bench.hpp"
#include "benchmarks/collective/collective_check.hpp"
#include "comm/communicator.hpp"
#include "core/device_buffer.hpp"
#include "core/event_timer.hpp"
#include "core/fill.hpp"
#include "core/size_parse.hpp"
#include "core/stream.hpp"

namespace kiln::benchmarks {
namespace {

// Small NCCL reductions of bookkeeping values (seed, wrong counts, per-iteration times).
template <typename T>
void allreduce_in_place(comm::Communicator& comm, T* device_values, std::size_t count,
                        ncclDataType_t type, ncclRedOp_t op, cudaStream_t stream,
                        const std::string& what) {
  comm.call(what, [&] {
    return ncclAllReduce(device_values, device_values, count, type, op, comm.get(), stream);
  });
  comm.wait(stream, what);
}

std::uint64_t shared_seed(comm::Communicator& comm, cudaStream_t stream) {
  std::uint64_t seed = 0;
  if (comm.rank() == 0)
    seed = (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  core::DeviceBuffer buffer(sizeof(seed));
  KILN_CUDA_CHECK(
      cudaMemcpyAsync(buffer.data(), &seed, sizeof(seed), cudaMemcpyHostToDevice, stream));
  comm.call("seed broadcast", [&] {
    return ncclBroadcast(buffer.data(), buffer.data(), 1, ncclUint64, 0, comm.get(), stream);
  });
  comm.wait(stream, "seed broadcast");
  KILN_CUDA_CHECK(cudaMemcpy(&seed, buffer.data(), sizeof(seed), cudaMemcpyDeviceToHost));
  return seed;
}

}  // namespace

std::vector<std::string> device_labels(const std::vector<RankDevice>& devices) {
  std::vector<std::string> labels;
  for (const RankDevice& d : devices) labels.push_back(d.name + " [" + d.bus_id + "]");
  return labels;
}

std::vector<RankDevice> gather_rank_devices(comm::Communicator& comm) {
  struct Record {
    int rank, pid, device;
    char bus_id[32];
    char name[256];
  };
  Record mine{};
  mine.rank = comm.rank();
  mine.pid = static_cast<int>(getpid());
  mine.device = comm.device();
  KILN_CUDA_CHECK(cudaDeviceGetPCIBusId(mine.bus_id, sizeof(mine.bus_id), comm.device()));
  cudaDeviceProp properties{};
  KILN_CUDA_CHECK(cudaGetDeviceProperties(&properties, comm.device()));
  std::snprintf(mine.name, sizeof(mine.name), "%s", properties.name);

  core::Stream stream;
  core::DeviceBuffer send(sizeof(Record));
  core::DeviceBuffer recv(sizeof(Record) * comm.size());
  KILN_CUDA_CHECK(
      cudaMemcpyAsync(send.data(), &mine, sizeof(Record), cudaMemcpyHostToDevice, stream));
  comm.call("device gather", [&] {
    return ncclAllGather(send.data(), recv.data(), sizeof(Record), ncclUint8, comm.get(), stream);
  });
  comm.wait(stream, "device gather");
  std::vector<Record> records(comm.size());
  KILN_CUDA_CHECK(cudaMemcpy(records.data(), recv.data(), recv.bytes(), cudaMemcpyDeviceToHost));
  std::vector<RankDevice> devices;
  for (const Record& record : records) {
    devices.push_back({record.rank, record.pid, record.device, record.bus_id, record.name});
  }
  return devices;
}

std::vector<CollectiveRow> run_collective_bench(
    comm::Communicator& comm, const CollectiveBenchOptions& o,
    const std::function<void(const CollectiveRow&)>& on_row) {
  const std::size_t element = core::dtype_size(o.dtype);
  const std::vector<std::uint64_t> sizes = message_sizes(o.min_bytes, o.max_bytes, o.factor);
  const comm::CollectiveCounts largest = comm::counts_for(o.op, sizes.back(), element, comm.size());

  core::Stream stream;
  core::DeviceBuffer send(std::max<std::uint64_t>(largest.send_count * element, 16));
  core::DeviceBuffer recv(std::max<std::uint64_t>(largest.recv_count * element, 16));
  core::DeviceBuffer wrong_counter(sizeof(unsigned long long));
  core::DeviceBuffer iteration_times(sizeof(float) * o.iterations);
  const std::uint64_t base_seed = shared_seed(comm, stream);

  std::vector<CollectiveRow> rows;
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    CollectiveRow row;
    row.counts = comm::counts_for(o.op, sizes[s], element, comm.size());
    const std::string what =
        fmt::format("{} of {} ({})", comm::op_name(o.op), core::format_size(row.counts.bytes),
                    core::dtype_name(o.dtype));
    const std::uint64_t seed = core::mix64(base_seed + s);
    core::fill_test_values(send.data(), o.dtype, row.counts.send_count, seed, comm.rank(), stream);
    KILN_CUDA_CHECK(cudaMemsetAsync(wrong_counter.data(), 0, sizeof(unsigned long long), stream));

    const CollectiveExpectation expectation{o.op, comm.size(), comm.rank(), seed,
                                            row.counts.block_count};
    const bool checks_here = o.op != comm::CollectiveOp::kReduce || comm.rank() == comm::kRootRank;
    const auto check_output = [&]() {
      if (checks_here) {
        count_wrong_elements(recv.data(), o.dtype, row.counts.recv_count, expectation,
                             wrong_counter.as<unsigned long long>(), stream);
      }
    };
    const auto enqueue = [&](int) {
      comm::enqueue_collective(comm, o.op, send.data(), recv.data(), row.counts, o.dtype, stream);
    };
    if (o.check) {
      core::poison(recv.data(), row.counts.recv_count * element, stream);
      enqueue(0);
      comm.wait(stream, what);
      check_output();
    }
    if (comm.rank() == o.debug_hang_rank) {
      std::fprintf(stderr,
                   "kiln: rank %d: --debug-hang-rank: this rank stops calling collectives\n",
                   comm.rank());
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    const std::vector<float> milliseconds =
        core::time_iterations(stream, {o.warmup, o.iterations}, enqueue,
                              [&](cudaStream_t waiting) { comm.wait(waiting, what); });
    if (o.check) check_output();  // the output of the last timed iteration

    KILN_CUDA_CHECK(cudaMemcpyAsync(iteration_times.data(), milliseconds.data(),
                                    sizeof(float) * milliseconds.size(), cudaMemcpyHostToDevice,
                                    stream));
    allreduce_in_place(comm, iteration_times.as<float>(), milliseconds.size(), ncclFloat32, ncclMax,
                       stream, "time reduction");
    allreduce_in_place(comm, wrong_counter.as<unsigned long long>(), 1, ncclUint64, ncclSum, stream,
                       "error-count reduction");
    std::vector<float> slowest(milliseconds.size());
    KILN_CUDA_CHECK(cudaMemcpy(slowest.data(), iteration_times.data(),
                               sizeof(float) * slowest.size(), cudaMemcpyDeviceToHost));
    unsigned long long wrong = 0;
    KILN_CUDA_CHECK(
        cudaMemcpy(&wrong, wrong_counter.data(), sizeof(wrong), cudaMemcpyDeviceToHost));

    for (float& value : slowest) value *= 1000.0f;  // ms -> us
    row.time_us = core::summarize(std::span<const float>(slowest));
    row.algbw_gbps = algorithm_bandwidth_gbps(row.counts.bytes, row.time_us.median * 1e-6);
    row.busbw_gbps = row.algbw_gbps * bus_factor(o.op, comm.size());
    row.wrong = wrong;
    row.checked = o.check != 0;
    rows.push_back(row);
    on_row(row);
  }
  return rows;
}

nlohmann::json collective_bench_json(const CollectiveBenchOptions& o,
                                     const std::vector<CollectiveRow>& rows, int world) {
  nlohmann::json result;
  result["op"] = comm::op_name(o.op);
  result["dtype"] = core::dtype_name(o.dtype);
  result["world_size"] = world;
  result["bus_factor"] = bus_factor(o.op, world);
  result["warmup"] = o.warmup;
  result["iterations"] = o.iterations;
  result["nccl_mode"] = o.nccl_nonblocking ? "non-blocking" : "blocking-data-path";
  result["rows"] = nlohmann::json::array();
  for (const CollectiveRow& row : rows) result["rows"].push_back(row_to_json(row));
  return result;
}

}  // namespace kiln::benchmarks
