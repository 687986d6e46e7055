// The options `advbo attack` and `advbo bench` share: what to attack, through which model and
// defense, under which threat model, budget and seed. Declared once here so the two commands
// cannot drift apart; each command adds only its own options (attack: --attack, -o, ...;
// bench: --attacks, --shard, --out-dir).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "experiment/spec.h"

namespace advbo::experiment {
class Experiment;
}

namespace advbo::cli {

/// Parsed shared options; defaults as documented by AddExperimentOptions.
struct ExperimentArgs {
  std::string dataset = "mnist", data, format = "auto", model, output = "auto";
  bool targeted = false, untargeted = false, rescale_compat = false;
  bool no_setup_queries = false;  ///< --no-setup-queries
  std::string pixels = "8bit";    ///< --pixels: 8bit | float
  std::optional<int> target;
  std::optional<int> num_images;  ///< unset = experiment::DefaultNumImages
  int threads = 0, clean_images = 1000;
  std::vector<std::string> classes;  ///< --classes: the model's class order by name
  std::vector<int> indices;
  std::optional<double> eps, defender_eps;  // unset = the dataset's / the attack's eps
  long budget = 900;
  uint64_t seed = 0;
  std::string defense = "none", defender_vae;
  std::string normalize;
  double http_timeout = 30;
  int http_retries = 3;
};

/// Adds the shared options (--dataset, --data, --format, --model, --output, --targeted,
/// --target, --untargeted, --eps, --budget, -n, --indices, --seed, --threads, --defense,
/// --defender-vae, --defender-eps, --clean-images, --rescale-compat, --no-setup-queries) to
/// `cmd`, parsed into
/// `args` (which must outlive parsing).
void AddExperimentOptions(CLI::App* cmd, ExperimentArgs* args);

/// The experiment these options describe, attacking with `attacks` (specs). Throws
/// std::invalid_argument when more than one of --targeted, --target, --untargeted is given;
/// everything else is checked by experiment::Validate.
experiment::ExperimentSpec SpecOf(const ExperimentArgs& args, std::vector<std::string> attacks);

/// Prints to stderr, for `command` ("advbo attack"), what a user of their own data should
/// see before a run: the class order the labels follow (sorted folder names or --classes) and
/// how many of the data's images are attacked when that is not all of them.
void PrintDataNotes(const char* command, const experiment::Experiment& ex);

/// Prints to stderr, after a run, what the model's answers say about the attack's footing:
/// how many probability rows held an exact zero (their log is clipped, so score-based losses
/// saturate; returning logits avoids it). Prints nothing when there is nothing to say.
void PrintModelNotes(const char* command, const experiment::Experiment& ex);

}  // namespace advbo::cli
