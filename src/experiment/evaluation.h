// The robust-accuracy evaluation as a library (docs/design.md, "Evaluate"): what `advbo
// evaluate` and Python's advbo.evaluate run, AutoAttack's protocol (Croce & Hein, ICML 2020)
// with black-box attacks sharing a per-image budget, beside a white-box reference (APGD)
// where it applies -- the counterpart of AutoAttack's run_standard_evaluation.
//
// Four steps, each here and nowhere else: plan (the images, the ensemble in order, each
// member wrapped by the defense's adaptive attack, the budget's shares), run (the ensemble
// over the images with resume, then the reference), verdict (the worst case per image, the
// upper-bound policy, "not evaluated"), merge (shards from separate folders). The command only
// parses options, draws the progress bar and prints the table.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiment/spec.h"
#include "whitebox/apgd.h"

namespace advbo::experiment {

class Experiment;

/// What an evaluation is asked for. Defaults are `advbo evaluate`'s.
struct EvaluationOptions {
  /// The run's options (model, data, images, threat model, defense, seed, ...). `budget` is
  /// the budget per image over the whole ensemble (default DefaultBudget(BudgetUse::kEvaluate),
  /// model queries). Always untargeted: `untargeted` is forced on; a `target`, a goal other
  /// than "success" or attacks in `attacks` are refused (the ensemble is `ensemble`).
  ExperimentSpec spec = EvaluationSpec();
  /// Comma list of attack specs, cheapest first ("" = attacks::DefaultEnsemble of the threat
  /// model: square for score-based L_inf).
  std::string ensemble;
  /// Whether to leave the members unwrapped behind a defense with an adaptive attack.
  bool no_adaptive = false;
  /// How the budget is shared: one positive weight per member in order ("" = equal).
  std::string split;
  /// The white-box reference where it applies: "auto" (kDefaultReference, reference.h) |
  /// "apgd" (APGD-CE + APGD-T) | "standard" (+ FAB-T, AutoAttack's standard) | "none".
  std::string reference = "auto";
  /// Run only the white-box reference.
  bool reference_only = false;
  /// The reference's settings (AutoAttack's standard: 100 steps, 1 restart, 9 targets).
  whitebox::ApgdOptions apgd;
  /// Output folder (required): records, reference, images, summary, table, curves.
  std::string out_dir;
  /// Folder for clean_<i>.png / adversarial_<i>.png / reference_<i>.png ("" = none).
  std::string save_images;
  /// This run's shard k of n (every n-th image from the k-th), 1 <= k <= n.
  int shard_k = 1;
  /// The number of shards n (see shard_k).
  int shard_n = 1;

  /// The spec an evaluation starts from: untargeted, the evaluate budget, 10 verify draws.
  static ExperimentSpec EvaluationSpec();
};

/// What an evaluation tells its caller as it goes (each may be empty).
struct EvaluationHooks {
  /// The experiment once it is built (images loaded, model probed): for notes on the data.
  std::function<void(const Experiment& ex)> on_experiment;
  /// A line for the user (the banner, the reference's notes; no trailing newline); `warning`
  /// marks one that should be shown even to a caller that wants quiet (a setting was
  /// changed).
  std::function<void(const std::string& line, bool warning)> note;
  /// A stage begins over `total` images ("ensemble" | "reference").
  std::function<void(const std::string& stage, long total)> begin;
  /// (images finished, status, whether an image just finished) within the current stage.
  std::function<void(long finished, const std::string& status, bool image_finished)> progress;
  /// The current stage ended.
  std::function<void()> end;
};

/// An evaluation's outcome.
struct EvaluationResult {
  /// summary.json's content: robust accuracy, its interval, the verdict counts, the
  /// upper-bound flag and reasons, the reference, the settings (see docs/guide/evaluate.md).
  nlohmann::json summary;
  /// table.txt's content (EvaluationTable of the summary).
  std::string table;
  /// The record file written (records.jsonl or records.shard-K-of-N.jsonl).
  std::string records;
  /// The attack records it holds (a merge's count).
  long record_count = 0;
  /// Where the caller's plot of `curve` belongs (curves.png beside curves.csv); "" when no
  /// ensemble ran.
  std::string curves_png;
  /// The points of the robust-accuracy curve (queries per image, robust accuracy in %), for
  /// curves.png; empty with reference_only.
  std::vector<double> curve;
  /// The curve's query step (budget / (points - 1)).
  double curve_step = 0;
  /// 0, or 3 when images were not evaluated (a record missing): the command's exit status.
  int status = 0;
};

/// Runs the evaluation: plans it (refusing bad options before any work, with
/// std::invalid_argument naming the option), builds the experiment, resumes the records
/// already in out_dir (refusing records made with other settings), runs the ensemble and
/// the reference, and writes records, reference.jsonl, images.jsonl, summary.json, table.txt
/// and curves.csv (with the shard's tag). Model and data errors propagate (oracle::ModelError,
/// data::DataError); finished attack runs stay in the record file for a resume.
EvaluationResult Evaluate(const EvaluationOptions& options, const EvaluationHooks& hooks = {});

/// Combines evaluate folders (shards run in separate folders or machines) into `out_dir`, a
/// new or empty folder: records, reference, images, summary, table and curves.csv; no model
/// query. Throws std::invalid_argument when the folders are not shards of one evaluation (a
/// setting, the images or an outcome differ) or out_dir is not new, std::runtime_error when a
/// folder is not an evaluate folder. An image no folder judged is not evaluated (status 3).
EvaluationResult MergeEvaluations(const std::vector<std::string>& inputs,
                                  const std::string& out_dir);

/// The table a person reads (table.txt and the command's output), from a summary alone.
std::string EvaluationTable(const nlohmann::json& summary);

}  // namespace advbo::experiment
