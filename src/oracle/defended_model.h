// What answers an attack's queries: a classifier, possibly behind a chain of defense stages
// (docs/design.md, "The oracle contract").
//
// The referee (Referee: budget, ball, grid, counting, records) sends every projected
// query through one DefendedModel. Each defense stage wraps the model inside it, so a
// defense is built outside the referee as a chain, outermost first:
//
//   WithLearner(        a game defender learns from every answer it gave (its payoff)
//    WithDetector(      a stateful detector sees the images as sent; refuses (flat answer)
//     WithOutputStage(  output post-processing of the log-probabilities (round, top-k, AAA)
//      WithInputStage(  input transformation of a copy of the images (noise, JPEG, VAE)
//       Undefended(classifier)))))
//
// A stage only ever sees images in [0, 1] and log-probabilities; the attacker's own images
// are never modified (an input stage transforms a copy).
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <memory>
#include <vector>

#include "oracle/classifier.h"

namespace advbo::oracle {

struct QueryResult;  // oracle/oracle.h

/// A defended model's answer to n images.
struct DefendedAnswer {
  /// [n, classes] log-probabilities as the attacker receives them (after every stage).
  Eigen::MatrixXd log_probs;
  /// [n] refused by a detector (a flat answer, never a success); empty when none was.
  std::vector<bool> refused;
  /// Wall seconds spent inside the classifier's forward pass.
  double model_seconds = 0;
};

/// What a stateful detector stage has seen (zero / -1 without a detector).
struct DetectorCounts {
  bool monitored = false;     ///< whether a detector watches the queries
  long detections = 0;        ///< detected images so far
  long first_detection = -1;  ///< 1-based index, among the images it saw, of the first (-1)
};

/// A classifier behind zero or more defense stages. Not thread-safe (stages keep state:
/// random engines, a detector's history, a defender's GP); one per attack instance.
class DefendedModel {
 public:
  virtual ~DefendedModel() = default;
  /// Answers n images [n, C*H*W] (pixels in [0, 1], not modified; the referee has projected
  /// them onto the threat model). `context` (may be null) goes to the classifier. Throws
  /// ModelError when the classifier fails; nothing is then counted by the referee.
  virtual DefendedAnswer Evaluate(const float* images, int n, const QueryContext* context) = 0;
  /// The classifier at the end of the chain.
  virtual const Classifier& classifier() const = 0;
  /// The detector stage's counts (the outermost detector's when there are several).
  virtual DetectorCounts detector() const { return {}; }
};

/// The classifier itself, undefended: log-probabilities of Classifier::LogProbabilities.
/// `model` must outlive the result.
std::unique_ptr<DefendedModel> Undefended(const Classifier& model);

/// An input stage: `transform(images, n)` modifies a copy of each batch [n, C*H*W] in place
/// (staying in [0, 1]) before the inner model sees it. A null transform adds nothing.
std::unique_ptr<DefendedModel> WithInputStage(std::unique_ptr<DefendedModel> inner,
                                              std::function<void(float* images, int n)> transform);

/// An output stage (defenses/output_defense.h): `post(log_probs)` modifies the inner
/// model's log-probabilities [n, classes] in place. A null function adds nothing.
std::unique_ptr<DefendedModel> WithOutputStage(
    std::unique_ptr<DefendedModel> inner, std::function<void(Eigen::MatrixXd* log_probs)> post);

/// A stateful detector stage (defenses/stateful_detector.h, Blacklight): `monitor(images,
/// n)` sees every batch as sent (before the inner stages) and returns [n] detected flags
/// (a wrong-sized verdict is a std::logic_error). With `reject` a detected image is refused:
/// its answer is flat (log 1/classes for every class) and marked in `refused`; without, it is
/// answered as usual and only counted. `monitor` must not be null.
std::unique_ptr<DefendedModel> WithDetector(
    std::unique_ptr<DefendedModel> inner,
    std::function<std::vector<bool>(const float* images, int n)> monitor, bool reject);

/// A learning defender's feedback (defenses/game_defense.h): after every batch, `learn` gets
/// the answers scored for the instance's goal (ScoreBatch with `true_class`, `target`; one
/// row per image evaluated, so EOT samples one by one) -- what each of its moves earned.
/// A null function adds nothing.
std::unique_ptr<DefendedModel> WithLearner(std::unique_ptr<DefendedModel> inner,
                                           std::function<void(const QueryResult&)> learn,
                                           int true_class, int target);

}  // namespace advbo::oracle
