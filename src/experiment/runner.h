// The one experiment runner under `advbo attack`, `advbo bench` and the attack-vs-defender
// `advbo game`: it validates an ExperimentSpec, loads data, model and defense, selects the
// instances, and runs one (instance, attack) job at a time through a fresh Referee,
// returning the attack's result and the instance record. The commands only parse
// arguments, decide which jobs to run, write records and format tables.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "attacks/attack.h"
#include "data/datasets.h"
#include "defenses/game_defense.h"
#include "experiment/setup.h"
#include "experiment/spec.h"
#include "oracle/classifier.h"
#include "oracle/lockstep.h"
#include "oracle/oracle.h"

namespace advbo::experiment {

/// What one job produced.
struct JobResult {
  attacks::AttackResult result;  ///< the attack's outcome (adversarial image included)
  nlohmann::json record;         ///< the instance record (InstanceRecord + defense fields)
  std::vector<float> clean;      ///< the clean image, C*H*W in [0, 1]
  /// The reported image rounded onto the 8-bit grid inside the eps-ball (QuantizeInBall; with
  /// 8-bit queries it is the reported image itself),
  /// and whether one extra query of it (a fresh oracle with the instance's defense; not
  /// counted in `queries`, recorded as quantized_queries; QueryPurpose::kVerify) met the
  /// goal. Also in the record: quantized_success, quantized_linf, quantized_queries. Not
  /// checked (false) under the rescale_compat threat model, whose queries are transformed.
  /// Without setup queries (spec.setup_queries false) nothing is re-queried: the attack's
  /// own answer to that image is used when it queried it exactly, else the check is
  /// skipped (quantized_success null in the record, false here).
  std::vector<float> quantized;
  /// The saved 8-bit image, re-queried, is adversarial.
  bool quantized_success = false;
};

/// Optional hooks of one job.
struct JobHooks {
  /// Seed of the attack's engine; unset = InstanceSeed(spec.seed, instance).
  std::optional<uint64_t> instance_seed;
  /// The job's query budget (>= 1); unset = spec.budget. `advbo evaluate` gives each attack
  /// of its ensemble its share of the per-image budget.
  std::optional<long> budget;
  /// Called after every answered batch of queries (after a game defender's update) with
  /// the batch, the 1-based index of its first query and the game defender (nullptr for a
  /// fixed pipeline or no defense).
  std::function<void(const oracle::QueryResult&, long first_query,
                     const defenses::GameDefense* defender)>
      on_batch;
};

/// A validated, loaded attack experiment.
class Experiment {
 public:
  /// Validates `spec` (Validate), loads the images, the defense, the attacks and the model,
  /// checks the target against the model's classes, selects the instances and, behind a
  /// defense, measures the clean accuracy. Throws std::invalid_argument (bad option, no
  /// instance: the message says why), data::DataError (data file) or oracle::ModelError
  /// (model or VAE file), each naming the file or option.
  explicit Experiment(ExperimentSpec spec);
  /// The same on images and a model the caller already holds (the Python module):
  /// `images` (labelled) replace spec.data and are named `data_name` in records; `model`
  /// (non-null) replaces spec.model. spec.dataset still picks the paper defaults (eps,
  /// the attacks' settings) when `data_name` equals it, else the attacks see "custom" data.
  /// `lockstep`: the lanes `model`'s back end scores in (oracle::MakeLockstepBackend or
  /// ClassifierOptions::lockstep), so that spec.lockstep (auto too) batches its calls; null =
  /// one call at a time (spec.lockstep > 1 is then refused).
  Experiment(ExperimentSpec spec, data::ImageSet images, std::unique_ptr<oracle::Classifier> model,
             const std::string& data_name, std::shared_ptr<oracle::Lockstep> lockstep = nullptr);

  /// The run's spec.
  const ExperimentSpec& spec() const { return spec_; }
  /// The run's threat model (ResolveThreatModel of the spec): what every banner,
  /// summary and record reports.
  const ThreatModel& threat_model() const { return tm_; }
  /// The ball's radius in use (pixel units; L_inf or L2 as norm() says).
  double epsilon() const { return tm_.eps; }
  /// The query space in use: spec.pixels, except that 8-bit falls back to float when an
  /// attacked image is not on the 1/255 grid (pixels_note() then says so).
  oracle::PixelSpace pixels() const { return tm_.pixels; }
  /// The ball's norm and the attacks' feedback.
  oracle::Norm norm() const { return tm_.norm; }
  /// What the attacks are told of a query: scores or the label.
  oracle::Feedback feedback() const { return tm_.feedback; }
  /// "" or a one-line note for the user about the query space: the float fallback, or with
  /// 8-bit L_inf queries a radius that loses a grid step (oracle::GridStepLossWarning).
  const std::string& pixels_note() const { return pixels_note_; }
  /// The radius actually enforced (pixel units): with 8-bit L_inf queries the grid radius
  /// oracle::GridRadius(epsilon()) (0.031 -> 7/255), else epsilon(). Records and summaries
  /// carry it as epsilon_effective.
  double epsilon_effective() const;
  /// The threat model's radius for banners and tables, e.g. "L_inf eps 0.031 = 7.905/255
  /// (8-bit queries enforce 7/255 = 0.02745)" or "L_inf eps 8/255 = 0.03137".
  std::string DescribeRadius() const;
  /// The data's name in records: the --data path, else the shipped dataset's name.
  const std::string& dataset_name() const { return dataset_name_; }
  /// The model file in use (the default resolved).
  const std::string& model_path() const { return model_path_; }
  /// The images the run attacks.
  const data::ImageSet& images() const { return images_; }
  /// The model (behind no defense).
  const oracle::Classifier& model() const { return *model_; }
  /// The defense in front of the model.
  const DefenseSetup& defense() const { return *defense_; }
  /// The selected instances and skipped images.
  const Selection& selection() const { return selection_; }
  /// The attack instances (image, goal), in order.
  const std::vector<Instance>& instances() const { return selection_.instances; }
  /// Number of attacks.
  size_t num_attacks() const { return attacks_.size(); }
  /// Attack j.
  const attacks::Attack& attack(size_t j) const { return *attacks_.at(j); }
  /// Clean top-1 accuracy of the undefended / defended model on the first clean_images
  /// images (NaN without a defense).
  double clean_accuracy() const { return clean_acc_; }
  /// Clean accuracy behind the defense (NaN without one).
  double defended_accuracy() const { return defended_acc_; }
  /// Images the model scored before any attack, by purpose (QueryPurpose names:
  /// shape_probe, selection, clean_accuracy), all 0 with spec.setup_queries false. Written
  /// into every record as "setup_queries" (run-level: shared by the run's instances).
  const nlohmann::json& setup_queries() const { return setup_queries_; }
  /// RecordSettings of this experiment's records (for resume and merge checks).
  nlohmann::json Settings() const;

  /// B, the lanes of RunJobs (ExperimentSpec::lockstep resolved: auto is
  /// AutoLockstepLanes(ceil(instances x attacks / workers()), input size) for a TorchScript
  /// model, else 1).
  int lockstep() const { return lanes_; }
  /// W, the worker groups of RunJobs (ExperimentSpec::workers resolved: auto is
  /// AutoWorkers(instances x attacks, cores) for a TorchScript model advbo loaded itself, else
  /// 1).
  int workers() const { return workers_; }
  /// LibTorch intra-op threads for work that runs in one piece beside the jobs (the white-box
  /// reference): spec.threads, or, when worker groups run one thread each, LibTorch's default
  /// as it was before; 0 = leave LibTorch's setting alone.
  int whole_threads() const { return whole_threads_; }
  /// Runs job(k) for k = 0..n-1 and the commits they return in job order: with lockstep() and
  /// workers() 1 one after the other on this thread (an exception stops the run at once), else
  /// in W groups of B lanes in lockstep (with W > 1 and spec.threads 0, at one LibTorch thread
  /// per forward pass) (oracle::Lockstep::Run: each job's model calls batched with the other
  /// lanes'; a job's exception stops new jobs, the running ones finish and commit, then the
  /// exception of the lowest-numbered failed job is rethrown). `job` runs Run() (on a lane
  /// thread: shared state it touches needs a lock; the commit runs one at a time).
  void RunJobs(size_t n, const std::function<oracle::Lockstep::Commit(size_t)>& job) const;
  /// What the lockstep rounds did so far (all zero with lockstep() 1).
  oracle::LockstepStats lockstep_stats() const;

  /// Runs attack `j` on instance `i` through a fresh oracle (budget spec.budget, the
  /// defense installed with InstanceDefenseSeed). Never more queries than the budget, no
  /// query outside the eps-ball (the oracle's contract). Model failures propagate as
  /// oracle::ModelError.
  JobResult Run(size_t i, size_t j, const attacks::AttackProgress& progress,
                const JobHooks& hooks = {}) const;

 private:
  // The constructors' common part; images_ and (optionally) model_ are set.
  void Init();
  // W and B for a run of `jobs` jobs (spec_.workers and spec_.lockstep, auto resolved), set on
  // lockstep_; the intra-op threads of whole_threads(). Throws std::invalid_argument for
  // --workers > 1 on a model scored one call at a time.
  void ResolveLanes(size_t jobs);
  // Loads spec_.model (in lockstep_'s lanes when local) unless the caller gave model_; checks a
  // given model's input shape against the images'.
  void LoadOrCheckModel();
  // --start-images: loads the user's folder into start_set_ and picks each target's start
  // there (TargetStartImages, scored behind `transform`). Throws data::DataError naming a
  // file, std::invalid_argument naming the folder when its images do not fit the model or a
  // target class has no image the model classifies as that class.
  std::map<int, int> UserStartImages(const SetupScoring& setup);
  // start_images_: for each target class of a hard-label run, the image it starts from (the
  // data's, or --start-images'); throws std::invalid_argument when a class has none.
  void ChooseStartImages(const SetupScoring& setup);
  // How setup queries are scored: behind the defense's input stages (none when
  // `undefended`), in the run's setup session of a served model.
  SetupScoring SetupScoringOf(bool undefended) const;
  // Adds true_class_name, target_name and adversarial_class_name to a record when the
  // user's data carry class names.
  void AddClassNames(nlohmann::json* record) const;
  // Fills out->quantized* and the record's quantized_* fields (one extra model query, or
  // none without setup queries: then the oracle's own answer to that image, if it asked).
  void VerifyQuantized(size_t i, uint64_t instance_seed, const oracle::Referee& orc,
                       JobResult* out) const;
  ExperimentSpec spec_;
  ThreatModel tm_;
  // Throws std::invalid_argument when `attack` (spec `name`) does not run under the spec's
  // norm, feedback or goal.
  void CheckAttackFits(const attacks::Attack& attack, const std::string& name) const;
  std::string pixels_note_;
  std::string dataset_name_, model_path_;
  data::ImageSet images_;
  std::unique_ptr<DefenseSetup> defense_;
  std::unique_ptr<oracle::Classifier> model_;
  std::vector<std::unique_ptr<attacks::Attack>> attacks_;
  Selection selection_;
  std::map<int, int> start_images_;  // targeted hard-label runs: target -> start image index
  data::ImageSet start_set_;         // --start-images: the user's start images (else empty)
  double clean_acc_, defended_acc_;
  nlohmann::json setup_queries_;
  std::string session_prefix_;
  mutable std::atomic<long> run_counter_{0}, verify_counter_{0};
  // The lanes the local model's back end scores in (null for a served or given model).
  std::shared_ptr<oracle::Lockstep> lockstep_;
  int lanes_ = 1, workers_ = 1, whole_threads_ = 0;
  bool loaded_model_ = false;  // advbo loaded the model itself (auto workers apply)
};

}  // namespace advbo::experiment
