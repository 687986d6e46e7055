// Input-transformation defenses: stages of the oracle pipeline in [0, 1] pixel space, before
// the model (docs/design.md), so an attacker always queries the defended system.
//
//  jpeg:quality=Q        JPEG compression at quality Q in [1, 100] (Dziugaite et al. 2016;
//                        Guo et al. 2018), OpenCV's libjpeg codec, 8-bit round trip
//  bits:depth=B          bit-depth reduction to B in [1, 8] bits per channel (feature
//                        squeezing, Xu et al. 2018): round(x (2^B - 1)) / (2^B - 1)
//  median:size=K         K x K median filter, K in {3, 5} (Xu et al. 2018)
//  blur:sigma=S          Gaussian blur with std. dev. S > 0 pixels (kernel 2 ceil(3S) + 1)
//  noise:sigma=S         Gaussian noise N(0, S^2) added to every query, then clipped to
//                        [0, 1] (random noise defense, Qin et al., NeurIPS 2021)
//  resize:ratio=R        random resize-and-pad (Xie et al., ICLR 2018): resize to a random
//                        side in [H, H (1 + R)], zero-pad at a random offset to H (1 + R),
//                        resize back to H (the model's input size); R in (0, 1]
//
// Output post-processing stages (defenses/output_defense.h: round, topk, aaa) act on the
// scores after the model; in a spec they may stand anywhere, and run after every input
// stage in their own order: "jpeg:quality=75+aaa" = JPEG before the model, AAA after it.
//
// A stateful detector (defenses/stateful_detector.h: blacklight:...) watches the queries
// themselves, before any input stage; it is created per client (attack instance or served
// session) from the pipeline's settings.
//
// Specs compose with '+', applied left to right: "median:size=3+noise:sigma=0.02".
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bo/random.h"
#include "defenses/output_defense.h"
#include "defenses/stateful_detector.h"

namespace advbo::defenses {

/// One input transformation.
class Defense {
 public:
  virtual ~Defense() = default;
  /// Canonical spec, e.g. "jpeg:quality=75".
  virtual std::string Spec() const = 0;
  /// Whether it draws random numbers (a different output for the same input).
  virtual bool randomized() const { return false; }
  /// Transforms n images [n, C, H, W] (floats in [0, 1], RGB channel order) in place; the
  /// output is in [0, 1]. Randomised defenses draw from rng.
  virtual void Apply(float* images, int n, int c, int h, int w, bo::Rng& rng) const = 0;
};

/// Defenses applied in order: input stages before the model, output stages after it.
class DefensePipeline {
 public:
  DefensePipeline() = default;
  /// A pipeline of input `stages` applied in order, then output stages and an optional stateful
  /// detector.
  explicit DefensePipeline(std::vector<std::shared_ptr<const Defense>> stages,
                           std::vector<std::shared_ptr<const OutputDefense>> outputs = {},
                           std::optional<BlacklightOptions> detector = std::nullopt)
      : stages_(std::move(stages)), outputs_(std::move(outputs)), detector_(detector) {}
  /// True when the pipeline changes nothing (no stage, no output stage, no detector).
  bool empty() const { return stages_.empty() && outputs_.empty() && !detector_; }
  /// The stateful detector's settings, if the pipeline has one.
  const std::optional<BlacklightOptions>& detector() const { return detector_; }
  /// Whether there is an input stage / an output stage.
  bool has_input() const { return !stages_.empty(); }
  /// True when it post-processes the model's output (AAA, rounding, top-k).
  bool has_output() const { return !outputs_.empty(); }
  /// "none" for an empty pipeline, else the input stages' specs, then the output stages',
  /// joined by '+'.
  std::string Spec() const;
  /// True when a stage draws randomness per query (the verdicts need fresh draws).
  bool randomized() const;
  /// The input stages on n images [n, C, H, W] in [0, 1], in place.
  void Apply(float* images, int n, int c, int h, int w, bo::Rng& rng) const;
  /// The output stages on a batch's log-probabilities [n, classes], in place.
  void ApplyOutput(Eigen::MatrixXd* log_probs, bo::Rng& rng) const;
  /// The attack that knows this defense (docs/design.md "Adaptive attacks"), built around
  /// the attack spec `base`: "eot:k=10/<base>" when a stage is randomized (expectation over
  /// transformation, Athalye et al. 2018), "aaa-adaptive:interval=..,reverse=../<base>"
  /// for an AAA stage with reverse > 0 (its margin map inverted; reverse = 0 flattens the
  /// margin inside each interval, which no attacker can undo), "oars:quantization=Q/<base>" for a
  /// stateful detector (attacks/adaptive: queries resampled around the attack's own), else `base`
  /// itself (a deterministic defense is part of the black box every score-based attack already
  /// queries).
  std::string AdaptiveAttack(const std::string& base) const;

 private:
  std::vector<std::shared_ptr<const Defense>> stages_;
  std::vector<std::shared_ptr<const OutputDefense>> outputs_;
  std::optional<BlacklightOptions> detector_;
};

/// "eot:k=10/<base>": the adaptive attack against a randomised defense (expectation over
/// transformation, Athalye et al. 2018, 10 samples per query; attacks/adaptive). The one
/// place advbo spells it.
std::string EotWrapped(const std::string& base);

/// Parses a spec (see the file comment; "none" or "" = no defense). Parameters may be
/// omitted for their defaults: jpeg quality 75, bits depth 4, median size 3, blur sigma 1,
/// noise sigma 0.02, resize ratio 0.1, round decimals 2, topk k 1, aaa interval 4, reverse 1,
/// temperature 1. Throws std::invalid_argument naming the offending
/// part and listing the valid defenses/parameters on unknown names, unknown or malformed
/// parameters and out-of-range values.
DefensePipeline ParseDefense(const std::string& spec);

/// The names ParseDefense accepts.
std::vector<std::string> DefenseNames();

}  // namespace advbo::defenses
