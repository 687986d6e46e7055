// The pieces of an attack experiment: locating the shipped data and models, loading a
// dataset and a classifier, the defense in front of it, choosing the attack instances
// (correctly classified images x goals) and the per-instance record. `Experiment`
// (experiment/runner.h) puts them together for `advbo attack`, `bench` and `game`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "attacks/attack.h"
#include "data/datasets.h"
#include "defenses/defense.h"
#include "defenses/game_defense.h"
#include "oracle/autoencoder.h"
#include "oracle/classifier.h"
#include "oracle/oracle.h"

namespace advbo::experiment {

/// The folder holding the shipped data/ and models/ (found upwards from the executable,
/// else the source tree).
std::filesystem::path RepoRoot();

/// Loads `data` (MNIST IDX images file with its labels beside it, CIFAR-10 .bin batch, or
/// an image file/folder; format auto|mnist|cifar10|images) or, when `data` is empty, the
/// shipped sample of `dataset` (mnist | cifar10). Throws data::DataError naming the file,
/// or std::invalid_argument on an unknown dataset/format.
data::ImageSet LoadImages(const std::string& dataset, const std::string& data,
                          const std::string& format);

/// How many images an experiment attacks when --num-images is not given: every image of the
/// user's own image folder or file (`user_data` and read as images: `sources` set), else 10.
int DefaultNumImages(const data::ImageSet& images, bool user_data);

/// `path` relative to the repository root when it lies inside it (records then carry
/// "models/mnist_cw.pt", not a machine's absolute path); otherwise `path` unchanged.
std::string RecordPath(const std::string& path);

/// `models/<dataset>_cw.pt` under RepoRoot().
std::string DefaultModelPath(const std::string& dataset);

/// Attack context (dataset name for paper defaults, image shape) of a loaded image set;
/// `data` non-empty means the user's own data ("custom").
attacks::AttackContext ContextFor(const data::ImageSet& images, const std::string& dataset,
                                  const std::string& data);

/// Loads the classifier at `path` (a TorchScript file or a served model's http:// URL) for
/// images of this set's shape (output: auto | logits | probs; threads: LibTorch intra-op
/// threads, 0 = default; normalize: "" or a Normalization spec; http: a URL's timeout and
/// retries). Throws oracle::ModelError naming the file or URL, std::invalid_argument on a
/// bad output kind or normalisation.
/// With `probe` false the model scores nothing on loading (no shape probe): the output kind
/// must be logits or probs; the class count is the data's class names' count when it has
/// them (a model that disagrees fails at its first query), else the model's first answer's.
/// `graph`: a TorchScript model's inference graph; `lockstep`: when set, a TorchScript
/// model scores in its lanes' rounds (oracle::MakeLockstepBackend).
std::unique_ptr<oracle::Classifier> LoadModelFor(
    const data::ImageSet& images, const std::string& path, const std::string& output, int threads,
    const std::string& normalize = "", const oracle::HttpOptions& http = {}, bool probe = true,
    oracle::ModelGraph graph = oracle::ModelGraph::kFrozen,
    std::shared_ptr<oracle::Lockstep> lockstep = nullptr);

/// Number of classes the labels of `images` imply: its class names' count when it has
/// them, else the largest label + 1 (at least 2).
int ClassCountOf(const data::ImageSet& images);

/// The --defense of `advbo attack` / `bench` / `game`: a fixed input-transformation pipeline
/// (defenses/defense.h) or a defender playing a repeated game against the attack, one round
/// per query (defenses/game_defense.h: "r2b2:latent", "r2b2:jpeg+noise", "random:latent").
class DefenseSetup {
 public:
  /// spec: "none", a pipeline or a game-defender spec; vae_path: the defender's VAE (""
  /// = `models/<dataset>_vae.pt`; required for latent actions, used as the attacker-image
  /// context of parameterised ones when present); defender_eps: the latent defender's clip
  /// radius around the attacker's image (pixels, (0, 1]). Throws std::invalid_argument on a
  /// bad spec or radius and oracle::ModelError on a missing or broken VAE that latent
  /// actions need.
  DefenseSetup(const std::string& spec, const data::ImageSet& images, const std::string& dataset,
               const std::string& vae_path, double defender_eps);
  /// True when there is no defense at all.
  bool empty() const { return !game_ && fixed_.empty(); }
  /// Whether the defense is a game defender (which learns from every query it answers).
  bool is_game() const { return game_ != nullptr; }
  /// Whether the same image can get different answers: a randomised input stage (noise,
  /// resize) or a game defender (whose actions are random to the attacker).
  bool randomized() const { return game_ != nullptr || fixed_.randomized(); }
  /// Canonical spec ("none" when empty).
  std::string Spec() const;
  /// The attack that knows this defense, around attack spec `base`
  /// (defenses::DefensePipeline::AdaptiveAttack; a game defender: "eot:k=10/<base>", its
  /// actions being random to the attacker).
  std::string AdaptiveAttack(const std::string& base) const {
    return game_ ? defenses::EotWrapped(base) : fixed_.AdaptiveAttack(base);
  }
  /// Selection of correctly classified images and clean accuracy: the pipeline's input
  /// stages (its output stages keep every argmax, rounding ties aside), or a game
  /// defender that gets no feedback (an r2b2 defender's neutral action, a random
  /// defender's random actions), seeded by `seed`; nullptr without input stages.
  /// = ForInstance(seed).transform.
  std::function<void(float*, int)> SelectionTransform(uint64_t seed) const;
  /// Puts the defense in front of an instance's oracle (a fresh defender per instance,
  /// seeded by `seed`): Referee::set_defense with ForInstance(seed).Chain. Returns the
  /// game defender (nullptr for a fixed pipeline), which the chain keeps alive too.
  /// `also` (optional) becomes the oracle's batch observer: called with every batch's scores
  /// after the defender's update.
  std::shared_ptr<defenses::GameDefense> Install(
      oracle::Referee& orc, uint64_t seed,
      std::function<void(const oracle::QueryResult&)> also = nullptr) const;
  /// An instance's defense detached from any oracle (what Install puts in front of one):
  /// the input transform (null without a defense), the feedback to call with each batch's
  /// scores (null for a fixed pipeline) and the game defender (null for a pipeline). Used
  /// by `advbo serve` for a session's defense, so a served model defends exactly as a local
  /// --defense with the same seed.
  struct InstanceDefense {
    /// Input transformation applied to n images in place (empty: none).
    std::function<void(float*, int)> transform;
    /// Output post-processing of a batch's log-probabilities (null without output stages).
    std::function<void(Eigen::MatrixXd*)> output;
    /// The stateful detector of this client (null without one), its view of the queries
    /// (oracle::WithDetector) and whether detected queries are refused.
    std::shared_ptr<defenses::StatefulDetector> detector;
    /// Stateful detector: flags per image of a batch of n (empty: none).
    std::function<std::vector<bool>(const float*, int)> monitor;
    /// The detector refuses flagged queries (false: only flags them).
    bool reject = false;
    /// Called with every answered query (a game defender learns from it).
    std::function<void(const oracle::QueryResult&)> feedback;
    /// The game defender of the instance (null: none).
    std::shared_ptr<defenses::GameDefense> defender;
    /// This defense as a chain of stages in front of `model` (oracle/defended_model.h):
    /// input transform, output stages, detector, and the defender learning from each
    /// answer scored for the goal (`true_class`, `target`: -1 = untargeted).
    std::unique_ptr<oracle::DefendedModel> Chain(const oracle::Classifier& model, int true_class,
                                                 int target) const;
  };
  /// The defense of one instance, its randomness seeded by `seed`.
  InstanceDefense ForInstance(uint64_t seed) const;
  /// Image shape the defense was set up for.
  int channels() const { return c_; }
  /// Image height in pixels.
  int height() const { return h_; }
  /// Image width in pixels.
  int width() const { return w_; }
  /// Path of the VAE in use ("" if none).
  std::string vae_path() const { return vae_ ? vae_->path() : ""; }

 private:
  /// A fresh game defender (game_ set) seeded by `seed`.
  std::shared_ptr<defenses::GameDefense> MakeDefender(uint64_t seed) const;
  defenses::DefensePipeline fixed_;
  std::unique_ptr<defenses::GameDefenseSpec> game_;
  std::shared_ptr<oracle::Autoencoder> vae_;
  int c_ = 0, h_ = 0, w_ = 0;
  double eps_ = 0;
};

/// Adds a game defender's summary to an instance record: "defender" (spec and VAE),
/// "defender_rounds" (queries it answered), "defender_mean_action" [action dim] and, for
/// parameterised actions, "defender_mean_pipeline" (the pipeline of the mean action).
void AddDefenderFields(const defenses::GameDefense& defender, const DefenseSetup& setup,
                       nlohmann::json* record);

/// How an experiment's setup queries (selection, start images, clean accuracy) are scored:
/// behind the defense's input stages, and, for a served model, in the run's own setup
/// session, so that a server's defense answers them as a local run does (never refused as
/// repeats, never seen by a defender; serve/server.h).
struct SetupScoring {
  /// The defense's input stages (DefenseSetup::SelectionTransform); null = none.
  std::function<void(float*, int)> transform;
  /// The run's setup session ("" = none: a local model ignores it) and the seed of the
  /// served defense's input stages in it (SelectionDefenseSeed of the run seed).
  std::string session;
  /// Seed of the instance's defense randomness.
  uint64_t defense_seed = 0;
};

/// Top-1 accuracy in [0, 1] of the model on the first min(n, size) labelled images,
/// behind `setup.transform` when given (the defended model's clean accuracy). Throws
/// oracle::RefusedError when a served defense refuses one of them.
double CleanAccuracy(const data::ImageSet& images, const oracle::Classifier& model, int n,
                     const SetupScoring& setup = {});

/// One attack instance: image index, its label, target class (-1 = untargeted).
struct Instance {
  /// Image index, its label and the goal's target class (-1 untargeted).
  ///@{
  int index, label, target;
  ///@}
};

/// The chosen images and instances.
struct Selection {
  std::vector<int> chosen;               ///< correctly classified images attacked
  std::vector<int> skipped;              ///< misclassified images passed over
  std::vector<int> skipped_predictions;  ///< the model's class of each skipped image
  std::vector<Instance> instances;       ///< chosen x goals, in order
  /// Images without a label (-1: a single file, or directly in an image folder) whose class
  /// was taken from the model's prediction: image index -> that class.
  std::map<int, int> predicted_labels;
};

/// Picks the given `indices` (each checked against the set) or else the first
/// `num_images` correctly classified images, and expands them into instances: untargeted,
/// one `target` (images of that class are skipped) or every other class (target < 0 and not
/// untargeted). "Correctly classified" is judged behind `setup.transform` (a defense) when given;
/// the model scores only as many images as it takes (at most 200 a batch), each counted as
/// a QueryPurpose::kSelection setup query. An image without a label takes the model's
/// predicted class as its label (`predicted_labels`). With `classify` false the model
/// scores nothing: the labels are trusted and every looked-at image is chosen (an image the
/// model already misclassifies is then attacked too), and an image without a label is a
/// data::DataError. Throws std::invalid_argument on an index out of range,
/// data::DataError on a label outside the model's classes and oracle::RefusedError (naming
/// the images) when a served model's defense refuses selection queries: a refused image is
/// not judged misclassified.
Selection SelectInstances(const data::ImageSet& images, const oracle::Classifier& model,
                          const std::vector<int>& indices, int num_images, bool untargeted,
                          int target, const std::string& dataset_name,
                          const SetupScoring& setup = {}, bool classify = true);

/// Start images of targeted hard-label attacks: for each target class of
/// `instances`, an image of class t that the model puts in class t (behind `setup`): the
/// first such image among the selection's `chosen` ones (already scored), else the first of
/// the other images labelled t in index order (scored 20 at a time, each a
/// QueryPurpose::kSelection setup query; at most 1,000 looked at). With `classify` false the
/// first image labelled t, unscored. Returns target -> image index, -1 where none was found.
std::map<int, int> TargetStartImages(const data::ImageSet& images, const oracle::Classifier& model,
                                     const Selection& selection, const SetupScoring& setup,
                                     bool classify);

/// The per-instance JSONL record of `advbo attack` and `advbo bench`: attack,
/// image_index, true_class, target (null = untargeted), success, queries (1-based first
/// success, or all used), queries_used, budget (all three in model evaluations: with EOT,
/// k samples per query, each sample counts, and eot_samples = k is recorded), epsilon, linf / l2 of
/// the reported image, final_objective, the attack's details, threat_model, seconds, model_seconds
/// (the instance's own share of the forward passes), wait_seconds (waiting for other lockstep
/// lanes or worker groups), bo_seconds (the rest), seed, instance_seed, model, dataset.
nlohmann::json InstanceRecord(const std::string& attack, const Instance& instance,
                              const attacks::AttackResult& result, const oracle::Referee& oracle,
                              uint64_t seed, uint64_t instance_seed, const std::string& model_path,
                              const std::string& dataset_name);

}  // namespace advbo::experiment
