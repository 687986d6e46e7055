// Worst-case robust accuracy over an ensemble of attacks (`advbo evaluate`): AutoAttack's
// protocol (Croce & Hein, ICML 2020, Sec. 4) with black-box attacks. Per image, the attacks
// run in a fixed order (cheapest first), each with its own budget, until one of them finds
// an adversarial image; an image is robust when none does. This file holds the ensemble's
// run (RunEnsemble) and turning the per-attack records into per-image verdicts and the summary.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace advbo::experiment {

/// Whether an attack record broke its image: the attack succeeded and the image a user
/// would save (8-bit, inside the ball) is adversarial too (quantized_success true; when the
/// record has no 8-bit check, quantized_success null, its success alone).
bool RecordBreaksImage(const nlohmann::json& record);

/// One image's verdict.
struct ImageVerdict {
  /// Index of the image in the data.
  int image_index = 0;
  bool clean_correct = false;  ///< the (defended) model classifies the clean image correctly
  bool robust = false;         ///< correct, every attack of the ensemble ran, none broke it
  /// false when an attack the verdict needs has no complete record (missing, or without a
  /// boolean "success"): the image is "not evaluated" -- never robust.
  bool evaluated = true;
  std::string broken_by;  ///< the first attack (in ensemble order) that broke it, or ""
  std::string missing;    ///< the first attack whose record is missing or partial, or ""
  long queries = 0;       ///< model queries of every attack run on it (all samples)
  /// The model query (1-based, counted over the ensemble in order) of the breaking attack's
  /// first success: its predecessors' queries_used plus its own "queries"; -1 when not
  /// broken by an attack. What the robust-accuracy-vs-queries curve plots.
  long break_query = -1;
  int attacks_run = 0;  ///< how many attacks ran on it
  /// The white-box reference's verdict (AttachReference): unset when it did not run on the
  /// image; false for a misclassified image.
  std::optional<bool> reference_robust;
  std::string reference_broken_by;  ///< "apgd-ce" | "apgd-t" | ""
};

/// Verdicts of `images` (indices looked at, in order) from the attack records of one run:
/// images in `misclassified` are not robust (no attack needed); for every other image the
/// records of the attacks in `order` are read in that order and the first that breaks it
/// names it. Attacks after the breaking one are ignored (the protocol stops there). An attack
/// before any break whose record is missing or partial (no boolean "success") makes the
/// image not evaluated (evaluated false, robust false, `missing` names the attack): nothing
/// counts as robust that was not attacked. Records of attacks outside `order` are ignored,
/// so the same records give the worst case over any prefix or subset.
std::vector<ImageVerdict> WorstCaseVerdicts(const std::vector<int>& images,
                                            const std::vector<int>& misclassified,
                                            const std::vector<nlohmann::json>& records,
                                            const std::vector<std::string>& order);

/// Sets reference_robust / reference_broken_by of each verdict from the white-box
/// reference's records (experiment/reference.h; one per image, by image_index): a
/// misclassified image is not robust, a correctly classified one without a record stays
/// unset.
void AttachReference(std::vector<ImageVerdict>* verdicts,
                     const std::vector<nlohmann::json>& reference_records);

/// The ensemble behind a defense that has an adaptive attack: every member m
/// becomes adaptive(m) (e.g. "aaa-adaptive:interval=4,reverse=1/m", "eot:k=10/m"), except a
/// member that already carries that wrapper (its name, the part of adaptive(m) before the
/// first ':' or '/', appears in m's spec): nothing is wrapped twice. When adaptive(m) == m
/// for the first member (a deterministic defense, or none: every query attack already sees
/// it) the members are returned as they are.
std::vector<std::string> AdaptiveEnsemble(
    const std::vector<std::string>& members,
    const std::function<std::string(const std::string&)>& adaptive);

/// The name of the wrapper adaptive(base) puts around `base` ("aaa-adaptive", "eot", "oars"),
/// or "" when adaptive(base) == base.
std::string AdaptiveWrapperName(const std::string& base,
                                const std::function<std::string(const std::string&)>& adaptive);

/// Wilson score interval of a proportion k / n at normal quantile z (1.96: 95 %); (0, 0) when
/// n = 0. Both ends in [0, 1].
std::pair<double, double> WilsonInterval(long k, long n, double z = 1.96);

/// The summary of verdicts: images, clean_accuracy, robust_accuracy with its 95 % Wilson
/// interval (robust_accuracy_ci95), not_evaluated (images counted neither robust nor
/// broken: a record missing), broken_by (attack -> images it broke first), and queries
/// (mean, median and max over attacked images of all the model queries spent on them).
/// With reference verdicts: reference_robust_accuracy, combined_robust_accuracy (robust only
/// where both the ensemble and the reference failed: RobustBench's "best known"),
/// reference_not_evaluated, and the per-image gap: robust_blackbox_only (images the
/// ensemble left robust but the reference broke) and robust_reference_only. Accuracies are
/// fractions in [0, 1] over all images (not evaluated ones count as not robust).
nlohmann::json SummarizeVerdicts(const std::vector<ImageVerdict>& verdicts,
                                 const std::vector<std::string>& order);

class Experiment;
struct JobResult;

/// What RunEnsemble reports as it goes.
struct EnsembleHooks {
  /// Each new attack run's record, once its image's ensemble finished (for the record file).
  std::function<void(const nlohmann::json& record)> on_record;
  /// (images finished, status, whether an image just finished); also during an attack.
  std::function<void(long finished, const std::string& status, bool image_finished)> progress;
  /// Each new attack run's whole result (the saved 8-bit image among it), after on_record.
  std::function<void(const JobResult& job)> on_job;
};

/// A finished attack run of the ensemble: whether it broke its image and the model queries
/// it used (queries_used).
struct EnsembleRun {
  /// Whether this attack broke the image.
  bool broke = false;
  /// Model queries it spent on the image.
  long queries_used = 0;
};

/// How the per-image budget is split over the ensemble: attack j gets
/// (budget - queries its predecessors used on the image) * shares[j] / (shares[j] + ... +
/// shares[last]), at least 1 -- the remaining budget divided among the remaining attacks in
/// proportion, so what an attack leaves unused (it stopped early) passes on and the image's
/// total never exceeds `budget`. `shares` has one positive weight per attack of the ensemble.
long EnsembleShare(long budget, long used, const std::vector<double>& shares, size_t j);

/// The ensemble protocol on the instances of `ex` (untargeted: one per correctly classified
/// image) whose image index is in `images`: the attacks of `ex` in order, each with its
/// share of `image_budget` (EnsembleShare; records carry it as "budget", per instance; the
/// image's total is the evaluation's, experiment/evaluation.h), until one breaks the image
/// (RecordBreaksImage). Attack runs listed in `done` (attack, image, target: resumed runs, other
/// shards') are not repeated. Images run in lockstep (Experiment::RunJobs: one lane per image); an
/// image's records are reported together, in image order, once its ensemble is done.
/// `hooks.progress` is called under a lock, so it needs none of its own. Returns the number of
/// those images no attack broke. Model failures propagate (oracle::ModelError) after the finished
/// images were reported.
long RunEnsemble(const Experiment& ex, const std::set<int>& images,
                 const std::map<std::tuple<std::string, int, int>, EnsembleRun>& done,
                 long image_budget, const std::vector<double>& shares, const EnsembleHooks& hooks);

}  // namespace advbo::experiment
