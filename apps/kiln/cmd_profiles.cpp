// `kiln profiles`: the spec-sheet ceilings kiln knows, beside any measured ones from the cache.
#include <fmt/format.h>

#include "apps/kiln/commands.hpp"
#include "core/hardware_profile.hpp"
#include "core/probe.hpp"
#include "core/provenance.hpp"

namespace kiln::app {

namespace {

nlohmann::json profile_json(const core::HardwareProfile& p) {
  return {{"key", p.key},
          {"name", p.display_name},
          {"sm_count", p.sm_count},
          {"memory_gib", p.memory_gib},
          {"bf16_tensor_tflops", p.bf16_tensor_tflops},
          {"fp16_tensor_tflops", p.fp16_tensor_tflops},
          {"tf32_tensor_tflops", p.tf32_tensor_tflops},
          {"fp8_tensor_tflops", p.fp8_tensor_tflops},
          {"fp32_tflops", p.fp32_tflops},
          {"hbm_gbps", p.hbm_gbps},
          {"interconnect", p.interconnect},
          {"interconnect_gbps_per_direction", p.interconnect_gbps_per_direction},
          {"pcie_gbps_per_direction", p.pcie_gbps_per_direction},
          {"source", p.source}};
}

}  // namespace

void register_profiles(CLI::App& app, Runner& run) {
  auto json_path = std::make_shared<std::string>();
  CLI::App* cmd =
      app.add_subcommand("profiles", "list the hardware profiles (spec-sheet ceilings)");
  cmd->add_option("--json", *json_path, "write the profiles as JSON here");
  cmd->callback([json_path, &run]() {
    run = [json_path](const Invocation& invocation) -> int {
      fmt::print("# hardware profiles (spec sheets; dense tensor rates, fp32 accumulate)\n");
      fmt::print("# {:<9} {:<24} {:>4} {:>6} {:>6} {:>6} {:>6} {:>6} {:>7} {:>9}  {}\n", "key",
                 "name", "SMs", "bf16", "tf32", "fp8", "fp32", "GiB", "HBM", "link/dir",
                 "interconnect");
      fmt::print("# {:<9} {:<24} {:>4} {:>6} {:>6} {:>6} {:>6} {:>6} {:>7} {:>9}\n", "", "", "",
                 "TF/s", "TF/s", "TF/s", "TF/s", "", "GB/s", "GB/s");
      nlohmann::json list = nlohmann::json::array();
      for (const core::HardwareProfile& p : core::hardware_profiles()) {
        fmt::print(
            "  {:<9} {:<24} {:>4} {:>6.1f} {:>6.1f} {:>6} {:>6.1f} {:>6.0f} {:>7.0f} {:>9.0f}  "
            "{}\n",
            p.key, p.display_name, p.sm_count, p.bf16_tensor_tflops, p.tf32_tensor_tflops,
            p.fp8_tensor_tflops > 0 ? fmt::format("{:.1f}", p.fp8_tensor_tflops) : "-",
            p.fp32_tflops, p.memory_gib, p.hbm_gbps, p.interconnect_gbps_per_direction,
            p.interconnect);
        list.push_back(profile_json(p));
      }
      const std::string cache = core::default_probe_cache_path();
      if (const std::optional<nlohmann::json> cached = core::load_probe_cache(cache)) {
        fmt::print("# measured on this machine ({}; `kiln probe --show` for details):\n", cache);
        for (const nlohmann::json& d : cached->at("probe").at("devices")) {
          fmt::print("#   device {} {}: copy {:.0f} GB/s (read+write), bf16 GEMM {:.0f} TFLOP/s\n",
                     d.at("device").get<int>(), d.at("name").get<std::string>(),
                     d.at("copy_gbps_read_plus_write").get<double>(),
                     d.at("gemm_bf16_tflops").get<double>());
        }
      } else {
        fmt::print("# no measured ceilings cached yet (run `kiln probe` on a GPU machine)\n");
      }
      if (!json_path->empty()) {
        nlohmann::json value;
        value["provenance"] =
            core::to_json(core::host_provenance(invocation.argc, invocation.argv));
        value["profiles"] = list;
        core::write_json_file(*json_path, value);
      }
      return 0;
    };
  });
}

}  // namespace kiln::app
