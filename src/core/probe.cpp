#include "core/probe.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/cublas_check.hpp"
#include "core/cuda_check.hpp"
#include "core/device_buffer.hpp"
#include "core/event_timer.hpp"
#include "core/fill.hpp"
#include "core/provenance.hpp"
#include "core/stream.hpp"

namespace kiln::core {
namespace {

std::string uuid_text(const cudaUUID_t& uuid) {
  std::string text = "GPU-";
  for (int i = 0; i < 16; ++i) {
    text += fmt::format("{:02x}", static_cast<unsigned char>(uuid.bytes[i]));
    if (i == 3 || i == 5 || i == 7 || i == 9) text += '-';
  }
  return text;
}

TimingStats time_ms(cudaStream_t stream, const ProbeOptions& options,
                    const std::function<void(int)>& body) {
  const std::vector<float> samples =
      time_iterations(stream, {options.warmup, options.iterations}, body);
  return summarize(std::span<const float>(samples));
}

void probe_copy(DeviceProbe& probe, const ProbeOptions& options, cudaStream_t stream) {
  probe.copy_ms = time_copy(stream, options.copy_bytes, {options.warmup, options.iterations});
  probe.copy_gbps = copy_gbps(options.copy_bytes, probe.copy_ms);
}

void probe_gemm(DeviceProbe& probe, const ProbeOptions& options, cudaStream_t stream) {
  const std::uint64_t n = static_cast<std::uint64_t>(options.gemm_size);
  const std::uint64_t elements = n * n;
  DeviceBuffer a(elements * 2);
  DeviceBuffer b(elements * 2);
  DeviceBuffer c(elements * 2);
  fill_uniform(a.data(), DType::kBf16, elements, 11, stream);  // random data: zeros run faster
  fill_uniform(b.data(), DType::kBf16, elements, 12, stream);
  cublasHandle_t handle = nullptr;
  KILN_CUBLAS_CHECK(cublasCreate(&handle));
  struct HandleGuard {
    cublasHandle_t h;
    ~HandleGuard() { cublasDestroy(h); }
  } guard{handle};
  KILN_CUBLAS_CHECK(cublasSetStream(handle, stream));
  const float alpha = 1.0f;
  const float beta = 0.0f;
  const int size = options.gemm_size;
  probe.gemm_ms = time_ms(stream, options, [&](int) {
    KILN_CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, size, size, size, &alpha,
                                   b.data(), CUDA_R_16BF, size, a.data(), CUDA_R_16BF, size, &beta,
                                   c.data(), CUDA_R_16BF, size, CUBLAS_COMPUTE_32F,
                                   CUBLAS_GEMM_DEFAULT));
  });
  probe.gemm_bf16_tflops =
      2.0 * static_cast<double>(n * n * n) / (probe.gemm_ms.median * 1e-3) / 1e12;
}

}  // namespace

TimingStats time_copy(cudaStream_t stream, std::size_t bytes, const TimingOptions& timing) {
  DeviceBuffer source(bytes);
  DeviceBuffer destination(bytes);
  fill_uniform(source.data(), DType::kFp32, bytes / 4, 1, stream);
  const std::vector<float> samples = time_iterations(stream, timing, [&](int) {
    KILN_CUDA_CHECK(cudaMemcpyAsync(destination.data(), source.data(), bytes,
                                    cudaMemcpyDeviceToDevice, stream));
  });
  return summarize(std::span<const float>(samples));
}

double copy_gbps(std::size_t bytes, const TimingStats& copy_ms) {
  return 2.0 * static_cast<double>(bytes) / (copy_ms.median * 1e-3) / 1e9;
}

ProbeResult run_probe(const ProbeOptions& options,
                      const std::function<void(const std::string&)>& progress) {
  int count = 0;
  KILN_CUDA_CHECK(cudaGetDeviceCount(&count));
  ProbeResult result;
  for (int device = 0; device < count; ++device) {
    KILN_CUDA_CHECK(cudaSetDevice(device));
    cudaDeviceProp properties{};
    KILN_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
    DeviceProbe probe;
    probe.device = device;
    probe.name = properties.name;
    probe.uuid = uuid_text(properties.uuid);
    probe.sm_count = properties.multiProcessorCount;
    probe.l2_bytes = static_cast<std::uint64_t>(properties.l2CacheSize);
    probe.memory_bytes = properties.totalGlobalMem;
    Stream stream;
    progress(fmt::format("device {} ({}): copy bandwidth, {} MiB per copy", device, probe.name,
                         options.copy_bytes >> 20));
    probe_copy(probe, options, stream);
    progress(fmt::format("device {}: bf16 GEMM {}^3 through cuBLAS", device, options.gemm_size));
    probe_gemm(probe, options, stream);
    result.devices.push_back(probe);
  }
  for (int source = 0; source < count; ++source) {
    for (int destination = 0; destination < count; ++destination) {
      if (source == destination) continue;
      progress(fmt::format("peer copy {} -> {}", source, destination));
      PeerProbe peer;
      peer.source = source;
      peer.destination = destination;
      int can_access = 0;
      KILN_CUDA_CHECK(cudaDeviceCanAccessPeer(&can_access, source, destination));
      peer.peer_access = can_access != 0;
      KILN_CUDA_CHECK(cudaSetDevice(destination));
      DeviceBuffer target(options.p2p_bytes);
      KILN_CUDA_CHECK(cudaSetDevice(source));
      if (peer.peer_access) {
        const cudaError_t enabled = cudaDeviceEnablePeerAccess(destination, 0);
        if (enabled == cudaErrorPeerAccessAlreadyEnabled) {
          cudaGetLastError();  // clear the sticky-free "already enabled" status
        } else {
          KILN_CUDA_CHECK(enabled);
        }
      }
      DeviceBuffer origin(options.p2p_bytes);
      Stream stream;
      fill_uniform(origin.data(), DType::kFp32, options.p2p_bytes / 4, 3, stream);
      peer.copy_ms = time_ms(stream, options, [&](int) {
        KILN_CUDA_CHECK(cudaMemcpyPeerAsync(target.data(), destination, origin.data(), source,
                                            options.p2p_bytes, stream));
      });
      peer.gbps = static_cast<double>(options.p2p_bytes) / (peer.copy_ms.median * 1e-3) / 1e9;
      result.peers.push_back(peer);
    }
  }
  return result;
}

namespace {
nlohmann::json stats_json(const TimingStats& stats) {
  return {{"median", stats.median}, {"min", stats.min}, {"max", stats.max},
          {"mean", stats.mean},     {"cv", stats.cv},   {"iterations", stats.count}};
}
}  // namespace

nlohmann::json to_json(const ProbeResult& result) {
  nlohmann::json value;
  value["devices"] = nlohmann::json::array();
  for (const DeviceProbe& d : result.devices) {
    value["devices"].push_back({{"device", d.device},
                                {"name", d.name},
                                {"uuid", d.uuid},
                                {"sm_count", d.sm_count},
                                {"l2_bytes", d.l2_bytes},
                                {"memory_bytes", d.memory_bytes},
                                {"copy_ms", stats_json(d.copy_ms)},
                                {"copy_gbps_read_plus_write", d.copy_gbps},
                                {"gemm_bf16_ms", stats_json(d.gemm_ms)},
                                {"gemm_bf16_tflops", d.gemm_bf16_tflops}});
  }
  value["peers"] = nlohmann::json::array();
  for (const PeerProbe& p : result.peers) {
    value["peers"].push_back({{"source", p.source},
                              {"destination", p.destination},
                              {"peer_access", p.peer_access},
                              {"copy_ms", stats_json(p.copy_ms)},
                              {"gbps_one_direction", p.gbps}});
  }
  return value;
}

std::string default_probe_cache_path() {
  std::filesystem::path directory;
  if (const char* dir = std::getenv("KILN_CACHE_DIR"); dir && *dir) {
    directory = dir;
  } else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    directory = std::filesystem::path(xdg) / "kiln";
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    directory = std::filesystem::path(home) / ".cache" / "kiln";
  } else {
    directory = ".kiln-cache";
  }
  return (directory / "probe.json").string();
}

void save_probe_cache(const std::string& path, const nlohmann::json& probe_with_provenance) {
  const std::filesystem::path file(path);
  std::error_code error;
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path(), error);
  if (error)
    throw Error(
        fmt::format("cannot create '{}': {}", file.parent_path().string(), error.message()));
  write_json_file(path, probe_with_provenance);
}

std::optional<nlohmann::json> load_probe_cache(const std::string& path) {
  std::ifstream file(path);
  if (!file) return std::nullopt;
  try {
    return nlohmann::json::parse(file);
  } catch (const nlohmann::json::exception& error) {
    throw Error(
        fmt::format("probe cache '{}' is not valid JSON ({}); delete it or run `kiln probe`", path,
                    error.what()));
  }
}

}  // namespace kiln::core
