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
  experiment::ExperimentSpec spec;  ///< every option that is a spec field (SpecOf sets attacks)
  bool targeted = false;            ///< --targeted (the spec's default; exclusive with the others)
  bool no_setup_queries = false;    ///< --no-setup-queries (spec.setup_queries = false)
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

/// Prints "COMMAND: note: ..." to stderr, even with -q, for what changes how queries are
/// answered: the query-space note (float fallback, a radius losing a grid step) and a model
/// that could not be frozen for inference (it runs plain).
void PrintQueryNotes(const char* command, const experiment::Experiment& ex);

/// Prints to stderr, after a run, what the model's answers say about the attack's footing:
/// how many probability rows held an exact zero (their log is clipped, so score-based losses
/// saturate; returning logits avoids it). Prints nothing when there is nothing to say.
void PrintModelNotes(const char* command, const experiment::Experiment& ex);

/// With lockstep B > 1 or W > 1 worker groups (Experiment::lockstep, workers), one line on
/// stderr after the run: the rounds, images per forward pass of B, the padding share and the
/// model's forward time per image (forward seconds summed over the groups, which run at once),
/// e.g. "advbo bench: lockstep 8 x 2 worker group(s): 1,234 rounds, 7.6 images per forward
/// pass of 8 (5 % padding), model forward 12.3 s = 0.80 ms per image". Per-record `seconds`
/// are then each job's wall time beside the others, not its share of the run.
void PrintLockstepStats(const char* command, const experiment::Experiment& ex);

}  // namespace advbo::cli
