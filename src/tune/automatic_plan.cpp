// The plan an overlap call runs when it is given none (see automatic_plan.hpp).
#include "tune/automatic_plan.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <nccl.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "comm/broadcast_text.hpp"
#include "core/cuda_check.hpp"
#include "core/device_buffer.hpp"
#include "core/error.hpp"
#include "core/hardware_profile.hpp"
#include "core/stream.hpp"
#include "overlap/launch_geometry.hpp"

namespace kiln::tune {
namespace {

// This rank's own lookup, with groups that do not fit this device's waves replaced.
PlanLookup lookup_for_this_device(overlap::OverlapOp op, const overlap::GemmShape& shape,
                                  core::DType dtype, int world, const PlanLookupOptions& options) {
  const PlanKey key = current_plan_key(op, shape, dtype, world);
  PlanLookupOptions o = options;
  const int sms = overlap::current_device_sms();
  if (o.device_sms <= 0) o.device_sms = sms;
  PlanLookup found = lookup_plan(key, o);
  if (!found.plan.partition.empty()) {
    const overlap::Plan& p = found.plan;
    const int waves = overlap::host_launch_geometry(shape, p.gemm, p.schedule, sms).waves();
    int total = 0;
    for (int g : p.partition) total += g;
    if (total != waves) {
      // The serial form stays serial (one group of every wave); other plans get one per wave.
      const bool serial = overlap::is_serial_plan(p);
      found.source +=
          fmt::format("; its groups cover {} waves but this GPU ({} SMs) launches {}: {}", total,
                      sms, waves, serial ? "one group of all" : "one group per wave");
      found.plan.partition = serial ? std::vector<int>{waves} : std::vector<int>{};
      found.predicted_us = -1.0;
    }
  }
  return found;
}

// Rank 0's answer as lines: a status tag, then predicted us, plan and source ("ok"), or the
// error's kind and message (kUsageErrorTag, kErrorTag).
constexpr const char* kOkTag = "ok";
constexpr const char* kUsageErrorTag = "usage-error";
constexpr const char* kErrorTag = "error";
// Room for the message inside broadcast_text's 4096 bytes, after the tag.
constexpr std::size_t kMaxErrorBytes = 3072;

std::string answer_wire(const PlanLookup& found) {
  return fmt::format("{}\n{:.17g}\n{}\n{}", kOkTag, found.predicted_us,
                     overlap::to_string(found.plan), found.source.substr(0, 2048));
}

std::string error_wire(const char* tag, const std::string& message) {
  std::string text = message.substr(0, kMaxErrorBytes);
  std::replace(text.begin(), text.end(), '\0', ' ');  // broadcast_text refuses NUL bytes
  return fmt::format("{}\n{}", tag, text);
}

// Rank 0's answer on this rank; rank 0's error raised with the same kind and text on every rank.
PlanLookup parse_wire(const std::string& wire, int rank) {
  const std::size_t tag_end = wire.find('\n');
  const std::string tag = wire.substr(0, tag_end);
  const std::string rest = tag_end == std::string::npos ? "" : wire.substr(tag_end + 1);
  if (tag == kUsageErrorTag || tag == kErrorTag) {
    const std::string message = "automatic plan: rank 0's lookup failed: " + rest;
    if (tag == kUsageErrorTag) throw UsageError(message);
    throw Error(message);
  }
  const std::size_t first = rest.find('\n');
  const std::size_t second = first == std::string::npos ? first : rest.find('\n', first + 1);
  if (tag != kOkTag || second == std::string::npos) {
    throw Error("automatic plan: rank 0's answer is malformed: " + wire);
  }
  PlanLookup found;
  found.predicted_us = std::stod(rest.substr(0, first));
  found.plan =
      overlap::parse_plan(rest.substr(first + 1, second - first - 1), "rank 0's automatic plan");
  found.source = rest.substr(second + 1) + (rank == 0 ? "" : " (rank 0's lookup)");
  return found;
}

}  // namespace

PlanKey current_plan_key(overlap::OverlapOp op, const overlap::GemmShape& shape, core::DType dtype,
                         int world) {
  int device = 0;
  KILN_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  KILN_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  const auto hw = core::profile_for_device_name(prop.name);
  return {hw ? hw->key : std::string(prop.name), world, overlap::overlap_op_name(op),
          core::dtype_name(dtype), shape};
}

PlanLookup automatic_plan(comm::Communicator& comm, overlap::OverlapOp op,
                          const overlap::GemmShape& shape, core::DType dtype,
                          const PlanLookupOptions& options) {
  // Checked first so that a bad shape is named as such, not as a lookup failure.
  if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0) {
    throw UsageError(
        fmt::format("shape {}x{}x{}: M, N and K must be positive", shape.m, shape.n, shape.k));
  }
  if (comm.size() == 1) return lookup_for_this_device(op, shape, dtype, 1, options);
  // Rank 0 looks up; the others take its answer. Rank 0 always reaches the broadcast, also when
  // its lookup throws (a cache file it cannot parse): the others would otherwise wait in the
  // broadcast for it. The wire then carries the error, and every rank raises it.
  std::string wire;
  if (comm.rank() == 0) {
    try {
      wire = answer_wire(lookup_for_this_device(op, shape, dtype, comm.size(), options));
    } catch (const UsageError& e) {
      wire = error_wire(kUsageErrorTag, e.what());
    } catch (const std::exception& e) {
      wire = error_wire(kErrorTag, e.what());
    }
  }
  return parse_wire(comm::broadcast_text(comm, wire, "automatic plan"), comm.rank());
}

}  // namespace kiln::tune
