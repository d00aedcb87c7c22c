// The `collage` subcommands. Each Add*Command registers one subcommand on the app; its
// callback stores the process exit code in `exit_code` (0 ok, 1 failure).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "collage/session.h"
#include "collage/status.h"

namespace collage::cli {

void AddInfoCommand(CLI::App& app, int& exit_code);
void AddRunCommand(CLI::App& app, int& exit_code);
void AddBenchCommand(CLI::App& app, int& exit_code);
void AddZooCommand(CLI::App& app, int& exit_code);
void AddDemoCommand(CLI::App& app, int& exit_code);
void AddBackendsCommand(CLI::App& app, int& exit_code);
void AddOptimizeCommand(CLI::App& app, int& exit_code);
void AddCostsCommand(CLI::App& app, int& exit_code);
void AddRayCommand(CLI::App& app, int& exit_code);

// `collage --version`: collage's version, then every built-in backend's library version (and
// the backends this build left out, with the reason).
std::string VersionText();

// Refuses an empty value (or one of only commas): `--threads ''` is not 0.
const CLI::Validator& NonEmptyValue();

// --tolerance T: a finite number >= 0 (NaN would accept every error, a negative none).
void AddToleranceOption(CLI::App* cmd, double& tolerance, const std::string& description);

// --strict-nan: SessionOptions::strict_non_finite (only rules meeting the NaN/Inf contract).
void AddStrictNanOption(CLI::App* cmd, bool& strict_non_finite);

// The cost database a command uses: its --cost-db flag, else $COLLAGE_COST_DB, else "" (the
// library's default file). Read by the command line only: an application embedding collage
// names its database itself (OptimizeOptions::cost_db_path).
std::string CostDbLocation(const std::string& flag);

// --backend-path DIR (repeatable): plug-in folders, loaded before the command runs.
void AddPluginOption(CLI::App* cmd, std::vector<std::string>& plugin_dirs);
Status LoadPlugins(const std::vector<std::string>& plugin_dirs);

// A flag, or a file a flag names, is wrong.
inline Status InvalidArgument(std::string message) {
  return Status(StatusCode::kInvalidArgument, std::move(message));
}

// Prints "error: <message>" to stderr (control bytes as \xNN) and returns 1 (130 for work the user interrupted).
int ReportError(const Status& status);

// After a run or a benchmark on one backend (no --plan): the note that says how to get a
// faster placement of `model`.
void PrintHowToPlace(const std::string& model, const std::string& backend);

// Turns repeated "--shape name=1x3x224x224" flags into SessionOptions::input_shapes.
// Every command fixes a model's shapes at load, from --shape or the shapes of the --input
// files (SessionOptions::shapes_per_run is off): a dynamic dim left open is refused with the
// flag that fixes it, and the shapes its commands measure and report are the ones run.
Status ParseShapeFlags(const std::vector<std::string>& flags, SessionOptions& options);

// The tensors of "--input NAME=FILE" flags (.npy/.pb), read before the model is loaded so
// that their shapes can fix its dynamic dims.
struct InputFiles {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> flags;  // name → "--input NAME=FILE", for messages
};
StatusOr<InputFiles> ReadInputFiles(const std::vector<std::string>& input_flags);
// Every input given as a file and not fixed by --shape takes the file's shape: its dynamic
// dims are fixed by the data (a static dim the data contradicts is refused at load).
void FixShapesFromInputFiles(const InputFiles& files, SessionOptions& options);

// Inputs for a session: the files read, random (seeded) for the rest when `random_rest`, else
// an error naming the missing ones.
StatusOr<std::map<std::string, Tensor>> LoadInputs(const Session& session, InputFiles files,
                                                    bool random_rest, unsigned seed);

// "1.23 ms", "456 us", "0.42 us": never "0 us" for a time that is not zero.
std::string FormatMillis(double ms);


// "placement (op-level): <nodes and groups per backend>; N layout conversions"
std::string PlacementSummary(const Session& session);

// Prints each of the session's warnings as "warning: ..." on stderr.
void PrintWarnings(const Session& session);


}  // namespace collage::cli
