// Output post-processing defenses: stages after the model that change the scores a query
// returns, not the image (docs/design.md, "Defenses against query attacks"). They act on a
// batch's log-probabilities [n, classes] (rows stay log-probabilities: logsumexp = 0, all
// finite) and keep every row's argmax, so the defended model's predictions, and its clean
// accuracy, are the undefended one's (rounding ties aside).
//
//  round:decimals=D         probabilities rounded to D in [1, 8] decimals (the "rounded
//                           probabilities" output defense of ART's postprocessors, Nicolae et
//                           al. 2018). A probability that rounds to 0 is reported as half a
//                           step, 0.5 * 10^-D, so that scores stay finite (a real API would
//                           print 0; the attack learns nothing more from half a step); rows
//                           are renormalised.
//  topk:k=K                 only the K largest probabilities are reported exactly (ART's
//                           "high confidence"/top-k output); the other classes share the rest
//                           of the mass equally. K >= 1; K >= classes reports everything.
//  aaa:interval=T,reverse=A,temperature=S
//                           Adversarial Attack on Attackers, linear attractors (Chen et al.,
//                           NeurIPS 2022, Sec. 3-4, "AAA-linear"): the top-2 logit margin m
//                           is mapped to t = a - A (m - a) with the attractor
//                           a = (floor(m / T) + 1/2) T, reversing the margin's trend inside
//                           each interval of width T (what a greedy score-based attack
//                           follows), and the top-1 probability is kept at the calibrated
//                           one, softmax(z / S)_max (the paper's calibration term). The paper
//                           minimises |margin - t| + w |p_max - p*| by Adam; here its
//                           minimiser is found in closed form (all other logits scaled by one
//                           factor c >= 0 about the runner-up, c by bisection), exact when a
//                           c exists, else the nearest c. T and S in [0.001, 1000].
//                           Defaults T = 4, A = 1, S = 1
//                           (the paper's code defaults); A in [0, 1] keeps t > 0, so the
//                           prediction never changes.
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <string>
#include <vector>

#include "bo/random.h"

namespace advbo::defenses {

/// One output post-processing stage.
class OutputDefense {
 public:
  virtual ~OutputDefense() = default;
  /// Canonical spec, e.g. "round:decimals=2".
  virtual std::string Spec() const = 0;
  /// Whether it draws random numbers.
  virtual bool randomized() const { return false; }
  /// Transforms log_probs [n, classes] (finite log-probabilities) in place; rows stay
  /// finite log-probabilities with the same argmax (rounding ties aside).
  virtual void Apply(Eigen::MatrixXd* log_probs, bo::Rng& rng) const = 0;
  /// The attack-side wrapper that undoes this stage (attacks/adaptive.h), e.g.
  /// "aaa-adaptive:interval=4,reverse=1"; "" when the stage leaves nothing to undo for a
  /// score-based attack or nothing can be undone.
  virtual std::string AdaptiveWrapper() const { return ""; }
};

/// Whether `name` ("round", "topk", "aaa") is an output stage.
bool IsOutputDefenseName(const std::string& name);

/// Builds the output stage `name` from its parameters (part: the whole "name:..." piece,
/// for messages). Throws std::invalid_argument naming the piece on unknown parameters or
/// values out of range.
std::shared_ptr<const OutputDefense> MakeOutputDefense(
    const std::string& name, const std::string& part,
    const std::vector<std::pair<std::string, std::string>>& params);

/// AAA-linear's margin map (Chen et al. 2022): m >= 0 -> a - reverse (m - a), a =
/// (floor(m / interval) + 1/2) interval. interval > 0, reverse in [0, 1].
double AaaTargetMargin(double margin, double interval, double reverse);
/// (Its inverse, what an attack that knows the defense computes, is
/// attacks::AaaTrueMargin in attacks/adaptive/adaptive.h.)

}  // namespace advbo::defenses
