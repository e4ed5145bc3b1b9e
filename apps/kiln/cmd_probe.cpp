// `kiln probe`: measure this machine's ceilings and cache them; `--show` prints the cache.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <cstdio>

#include "apps/kiln/commands.hpp"
#include "core/hardware_profile.hpp"
#include "core/probe.hpp"
#include "core/provenance.hpp"

namespace kiln::app {
namespace {

struct ProbeFlags {
  bool show = false;
  bool quick = false;
  std::string cache_path;
  std::string json_path;
};

void print_probe(const nlohmann::json& cached) {
  const nlohmann::json& probe = cached.at("probe");
  fmt::print("# measured {} on {} (commit {})\n", cached.at("provenance").value("date", "?"),
             cached.at("provenance").value("host", "?"),
             cached.at("provenance").value("commit", "?"));
  fmt::print("# {:>3} {:<28} {:>5} {:>16} {:>10} {:>16} {:>10}\n", "dev", "name", "SMs",
             "copy GB/s (r+w)", "of spec", "bf16 GEMM TF/s", "of spec");
  for (const nlohmann::json& d : probe.at("devices")) {
    const std::string name = d.at("name");
    const std::optional<core::HardwareProfile> spec = core::profile_for_device_name(name);
    const double copy = d.at("copy_gbps_read_plus_write");
    const double gemm = d.at("gemm_bf16_tflops");
    fmt::print("  {:>3} {:<28} {:>5} {:>16.1f} {:>10} {:>16.1f} {:>10}\n",
               d.at("device").get<int>(), name, d.at("sm_count").get<int>(), copy,
               spec ? fmt::format("{:.1f}%", 100.0 * copy / spec->hbm_gbps) : "-", gemm,
               spec ? fmt::format("{:.1f}%", 100.0 * gemm / spec->bf16_tensor_tflops) : "-");
  }
  if (!probe.at("peers").empty()) {
    fmt::print("# peer-to-peer copy, one direction (GB/s): rows source, columns destination\n");
    int count = static_cast<int>(probe.at("devices").size());
    std::vector<std::vector<double>> matrix(count, std::vector<double>(count, 0.0));
    for (const nlohmann::json& p : probe.at("peers")) {
      matrix[p.at("source").get<int>()][p.at("destination").get<int>()] =
          p.at("gbps_one_direction");
    }
    fmt::print("  {:>4}", "");
    for (int j = 0; j < count; ++j) fmt::print(" {:>8}", j);
    fmt::print("\n");
    for (int i = 0; i < count; ++i) {
      fmt::print("  {:>4}", i);
      for (int j = 0; j < count; ++j) {
        fmt::print(" {:>8}", i == j ? std::string("-") : fmt::format("{:.1f}", matrix[i][j]));
      }
      fmt::print("\n");
    }
  } else {
    fmt::print("# peer-to-peer: one GPU only, nothing to measure\n");
  }
}

}  // namespace

void register_probe(CLI::App& app, Runner& run) {
  auto flags = std::make_shared<ProbeFlags>();
  CLI::App* cmd = app.add_subcommand(
      "probe",
      "measure copy bandwidth, bf16 GEMM rate (cuBLAS) and per-pair P2P bandwidth; cache them");
  cmd->add_flag("--show", flags->show, "print the cached measurements (no GPU needed)");
  cmd->add_flag("--quick", flags->quick, "fewer iterations and smaller buffers");
  cmd->add_option("--cache", flags->cache_path,
                  "cache file (default: $KILN_CACHE_DIR/probe.json, "
                  "else $XDG_CACHE_HOME/kiln, else ~/.cache/kiln)");
  cmd->add_option("--json", flags->json_path, "also write the result with provenance here");
  cmd->callback([flags, &run]() {
    run = [flags](const Invocation& invocation) -> int {
      const std::string cache =
          flags->cache_path.empty() ? core::default_probe_cache_path() : flags->cache_path;
      if (flags->show) {
        const std::optional<nlohmann::json> cached = core::load_probe_cache(cache);
        if (!cached) {
          std::fprintf(stderr, "kiln: no probe cache at %s; run `kiln probe` on a GPU machine\n",
                       cache.c_str());
          return 1;
        }
        print_probe(*cached);
        return 0;
      }
      int devices = 0;
      if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::fprintf(stderr,
                     "kiln: probe: no CUDA GPU is visible here; `kiln probe --show` prints "
                     "a cached probe and `kiln profiles` the spec sheets\n");
        return 1;
      }
      core::ProbeOptions options;
      if (flags->quick) {
        options.copy_bytes = 256ull << 20;
        options.gemm_size = 4096;
        options.p2p_bytes = 64ull << 20;
        options.iterations = 5;
      }
      core::Provenance provenance = core::host_provenance(invocation.argc, invocation.argv);
      const core::ProbeResult result = core::run_probe(options, [](const std::string& line) {
        std::fprintf(stderr, "kiln probe: %s\n", line.c_str());
      });
      provenance.world_size = devices;
      for (int d = 0; d < devices; ++d) core::add_device_provenance(provenance, d);
      nlohmann::json value;
      value["provenance"] = core::to_json(provenance);
      value["probe"] = core::to_json(result);
      core::save_probe_cache(cache, value);
      if (!flags->json_path.empty()) core::write_json_file(flags->json_path, value);
      print_probe(value);
      fmt::print("# cached in {}\n", cache);
      return 0;
    };
  });
}

}  // namespace kiln::app
