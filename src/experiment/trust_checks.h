// The checks that say when an evaluation's number cannot be trusted (`advbo evaluate`'s
// "checks" in table.txt, "checks" and "flags" in summary.json), in the spirit of
// AutoAttack's checks.py and RobustBench's "unreliable" flag (Croce et al. 2021):
//   randomised outputs   the same clean image scored twice gives different scores: a
//                        randomised model needs an EOT attack, and a worst case over single
//                        draws is not a robust accuracy;
//   probability outputs  the model returns probabilities: gradients through a saturated
//                        softmax vanish (the reference works on their logs);
//   zero gradients       the reference saw an all-zero input gradient (gradient masking);
//   masking suspected    the black-box ensemble broke more than kMaskingPoints of the images
//                        the white-box reference left robust (AutoAttack's rule: quote the
//                        combined number);
//   vertex resistance    the reference broke more than kVertexPoints of the images the
//                        ensemble left robust: the black-box number is an upper bound (a model
//                        that resists the ball's vertices, where Square-like attacks search).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace advbo::experiment {

class Experiment;

/// Masking threshold, in percentage points of the images (AutoAttack's 0.2).
inline constexpr double kMaskingPoints = 0.2;
/// Vertex-resistance threshold, in percentage points of the images.
inline constexpr double kVertexPoints = 2.0;

/// What the randomised-output probe saw.
struct OutputProbe {
  long images = 0;            ///< clean images scored twice each
  long queries = 0;           ///< model queries spent (2 per image; purpose "other")
  double max_difference = 0;  ///< largest |raw score difference| between the two scorings
  double max_score = 0;       ///< largest |raw score| seen (the difference's scale)
  /// Whether the scores differed beyond float noise (1e-6 of the scores' scale).
  bool randomised() const;
  /// {"images", "queries", "max_difference", "max_score", "randomised"}.
  nlohmann::json ToJson() const;
  /// The probe of a summary's "checks" (zero when absent: a folder written before the checks).
  static OutputProbe FromSummary(const nlohmann::json& summary);
  /// Adds another shard's probe: images and queries summed, the maxima kept (merging folders).
  void Add(const OutputProbe& other);
};

/// Scores the first `images` correctly classified clean images of `ex` (its instances) twice,
/// each image once per batch, through the bare model (no defense), and compares the raw
/// scores. Throws oracle::ModelError when the model fails.
OutputProbe ProbeRandomisedOutputs(const Experiment& ex, int images = 4);

/// Adds "checks" (the measurements) and "flags" (one {"check", "message"} per check that
/// fired) to `summary`, reading its images, ensemble, reference, robust_blackbox_only and
/// robust_reference_only. `reference` holds the reference records (their zero_gradient);
/// `probability_outputs` says whether the model's scores are probabilities.
void AddTrustChecks(nlohmann::json* summary, const std::vector<nlohmann::json>& reference,
                    const OutputProbe& probe, bool probability_outputs);

/// The table's rows of the checks, from the summary alone ("" for a summary without them).
std::string TrustCheckRows(const nlohmann::json& summary);

}  // namespace advbo::experiment
