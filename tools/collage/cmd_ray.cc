// `collage ray resources`: the Ray custom resource that marks a node as measuring like this
// machine, as the JSON `ray start --resources` takes, so that a node is started with
//
//   ray start --address HEAD:6379 --resources "$(collage ray resources)"
//
// and `collage optimize --workers ray` on a machine with the same device fingerprint sends
// it candidates to measure (README, "Fanning measurement out with Ray"). The fingerprint
// itself goes to stderr: stdout stays the JSON alone.
#include <cstdio>

#include "collage/device_fingerprint.h"
#include "collage/printable_text.h"
#include "commands.h"

namespace collage::cli {

void AddRayCommand(CLI::App& app, int& exit_code) {
  CLI::App* ray = app.add_subcommand("ray", "Measuring on the nodes of a Ray cluster");
  ray->require_subcommand(1);
  CLI::App* resources = ray->add_subcommand(
      "resources",
      "Print this machine's device resource as JSON for `ray start --resources` (value 1: one "
      "measurement at a time on the node)");
  resources->callback([&exit_code] {
    // The name is a hash: no quoting needed in JSON.
    std::printf("{\"%s\": 1}\n", DeviceResourceName().c_str());
    std::fprintf(stderr, "device fingerprint: %s\n", PrintableText(DeviceFingerprint()).c_str());
    exit_code = 0;
  });
}

}  // namespace collage::cli
