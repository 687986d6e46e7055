// Worst-case robust accuracy over an ensemble of attacks (`advbo evaluate`): AutoAttack's
// protocol (Croce & Hein, ICML 2020, Sec. 4) with black-box attacks. Per image, the attacks
// run in a fixed order (cheapest first), each with its own budget, until one of them finds
// an adversarial image; an image is robust when none does. This file holds the ensemble's
// run (RunEnsemble) and turning the per-attack records into per-image verdicts and the summary.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
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
  int image_index = 0;
  bool clean_correct = false;  ///< the (defended) model classifies the clean image correctly
  bool robust = false;         ///< correct and no attack of the ensemble broke it
  std::string broken_by;       ///< the first attack (in ensemble order) that broke it, or ""
  long queries = 0;            ///< model queries of every attack run on it (all samples)
  int attacks_run = 0;         ///< how many attacks ran on it
};

/// Verdicts of `images` (indices looked at, in order) from the attack records of one run:
/// images in `misclassified` are not robust (no attack needed); for every other image the
/// records of the attacks in `order` are read in that order and the first that breaks it
/// names it. Attacks after the breaking one are ignored (the protocol stops there), as are
/// attacks missing from the records (not run yet). Records of attacks outside `order` are
/// ignored, so the same records give the worst case over any prefix or subset.
std::vector<ImageVerdict> WorstCaseVerdicts(const std::vector<int>& images,
                                            const std::vector<int>& misclassified,
                                            const std::vector<nlohmann::json>& records,
                                            const std::vector<std::string>& order);

/// Wilson score interval of a proportion k / n at normal quantile z (1.96: 95 %); (0, 0) when
/// n = 0. Both ends in [0, 1].
std::pair<double, double> WilsonInterval(long k, long n, double z = 1.96);

/// The summary of verdicts: images, clean_accuracy, robust_accuracy with its 95 % Wilson
/// interval (robust_accuracy_ci95), broken_by (attack -> images it broke first), and
/// queries (mean and median over attacked images of all the model queries spent on them).
nlohmann::json SummarizeVerdicts(const std::vector<ImageVerdict>& verdicts,
                                 const std::vector<std::string>& order);

class Experiment;

/// What RunEnsemble reports as it goes.
struct EnsembleHooks {
  /// Each new attack run's record, as soon as it finished (for the record file).
  std::function<void(const nlohmann::json& record)> on_record;
  /// (images finished, status, whether an image just finished); also during an attack.
  std::function<void(long finished, const std::string& status, bool image_finished)> progress;
};

/// The ensemble protocol on the instances of `ex` (untargeted: one per correctly classified
/// image) whose image index is in `images`: the attacks of `ex` in order, each with the full
/// budget, until one breaks the image (RecordBreaksImage). Attack runs listed in `done`
/// (attack, image, target -> whether it broke the image: resumed runs, other shards') are not
/// repeated. Returns the number of those images no attack broke. Model failures propagate
/// (oracle::ModelError) after the finished runs were reported.
long RunEnsemble(const Experiment& ex, const std::set<int>& images,
                 const std::map<std::tuple<std::string, int, int>, bool>& done,
                 const EnsembleHooks& hooks);

}  // namespace advbo::experiment
