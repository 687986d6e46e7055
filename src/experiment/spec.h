// What an attack experiment is: the instance specification shared by `advbo attack`,
// `advbo bench` and the attack-vs-defender `advbo game`, validated where it enters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "experiment/threat_model.h"

namespace advbo::experiment {

/// One attack experiment: which images of which data, through which model and defense,
/// attacked by which attacks under which threat model, budget and seed. Defaults are the
/// BOS^2 thesis' protocol (Sec. 5.3): targeted on every other class, T = 900 queries.
struct ExperimentSpec {
  std::string dataset = "mnist";  ///< shipped dataset (mnist | cifar10); also picks defaults
  std::string data;               ///< the user's own data instead ("" = shipped sample)
  std::string format = "auto";    ///< format of `data`: auto | mnist | cifar10 | images
  std::string model;  ///< TorchScript file or served model URL ("" = `models/<dataset>_cw.pt`)
  std::string output = "auto";  ///< model output: auto | logits | probs
  std::string normalize;        ///< input normalisation "MEAN[,..]:STD[,..]" ("" = none)
  /// The model's class order by name (data::ApplyClassOrder; only with `data` that names its
  /// classes, e.g. an image folder's class-name sub-folders); empty = the data's own order.
  std::vector<std::string> classes;
  double http_timeout = 30;  ///< served model: seconds per request, > 0
  int http_retries = 3;      ///< served model: retries after transport errors, 0..100
  /// Served model: the name of this run's defense sessions (X-Advbo-Session prefix, printable
  /// ASCII without spaces, 1..128 characters). "" = a new random name per run, so no run
  /// sees another's defense state. A named session is shared: a later run with the same
  /// name and seed meets the defense state (a detector's memory, a defender's GP) that the
  /// earlier one left (docs/defenses.md, "Served defenses and sessions").
  std::string session;
  /// Attack specs (registry name, or bos2:key=value,...), run on the same instances.
  std::vector<std::string> attacks = {"bos2"};
  bool untargeted = false;    ///< untargeted (argmax != true class)
  std::optional<int> target;  ///< one target class (>= 0); unset = every other class
  std::vector<int> indices;   ///< explicit image indices (empty = first num_images)
  /// First N correctly classified images (>= 1); unset = every image of the user's image
  /// folder or file (`data` read as images), else 10 (DefaultNumImages in setup.h).
  std::optional<int> num_images;
  /// The ball's radius in pixel units (L_inf in (0, 1], L2 in (0, kMaxL2Radius]); unset =
  /// DefaultRadius(dataset, norm, radius_use).
  std::optional<double> eps;
  /// Which row of the default-radius table applies (kStandard for every command).
  RadiusUse radius_use = RadiusUse::kStandard;
  /// How the threat model's options are named in errors (the CLI's flags; the Python API
  /// passes OptionNames::Python()).
  OptionNames option_names;
  /// Model queries per instance, in [1, kMaxBudget] (per image for an evaluation).
  long budget = DefaultBudget(BudgetUse::kAttack);
  uint64_t seed = 0;  ///< run seed (experiment/seeds.h derives the rest)
  int threads = 0;    ///< LibTorch intra-op threads, 0 = default, <= kMaxThreads
  /// Inference graph of a TorchScript model: "frozen" (default; frozen and optimised for
  /// inference, logits within ~1e-6 of the plain module) or "plain" (the module as loaded,
  /// bit for bit what versions before the frozen graph scored). See oracle::ModelGraph.
  std::string model_graph = "frozen";
  /// Instances in lockstep (oracle/lockstep.h): B jobs run at once and their model
  /// calls go to the model as batches of B images. 0 = auto: AutoLockstepLanes(one worker
  /// group's share of instances x attacks, input size) for a TorchScript model (8 for CIFAR-10-size
  /// runs of 8 jobs or more, 1 for MNIST), 1 for a served one; 1 = one job at a time, every call
  /// scored as it is (bit for bit the scores of versions before the frozen graph). An image's
  /// scores depend on B in the last float bits (records carry it as `lockstep`), never on thread
  /// timing or on which jobs run beside it. In [0, oracle::kMaxLockstepLanes].
  int lockstep = 0;
  /// Worker groups (oracle::Lockstep groups): W groups of B lanes, group g
  /// taking jobs g, g + W, ... (as shards), each scoring its own rounds, so W forward passes run
  /// at once, one per core; with W > 1 and threads 0, LibTorch runs one intra-op thread per
  /// pass (the white-box reference of `evaluate` keeps LibTorch's default). 0 = auto:
  /// AutoWorkers(instances x attacks, cores) for a TorchScript model advbo loads, 1 for a
  /// served one or a model handed in (the Python API). Records carry it as `workers`; an image's
  /// scores do not depend on it on the shipped models (they depend on B alone). In [0,
  /// oracle::kMaxLockstepGroups].
  int workers = 0;
  std::string defense = "none";        ///< defense or game-defender spec (defenses/)
  std::string defender_vae;            ///< VAE of a game defender ("" = `models/<dataset>_vae.pt`)
  std::optional<double> defender_eps;  ///< game defender's clip radius; unset = eps
  int clean_images = 1000;             ///< images for the clean accuracy behind a defense, >= 0
  /// Re-queries of each saved image behind a randomised defense (fresh draws of its
  /// randomness); the saved image is adversarial when most draws are. 1..1000;
  /// a deterministic defense (or none) always takes one.
  int verify_draws = 1;
  bool rescale_compat = false;  ///< BayesOpt reference's rescaling threat model
  /// Query space: "8bit" (default; every query on the 1/255 grid inside the ball, so a
  /// success is a savable image; data off the grid fall back to "float" with a note) or
  /// "float" (the papers' setting). See oracle::PixelSpace.
  std::string pixels = "8bit";
  /// The ball's norm: "linf" (default) or "l2" (eps then an L2 radius, pixel units over all
  /// C*H*W values). See oracle::Norm.
  std::string norm = "linf";
  /// What the attacks are told: "scores" (default; score-based attacks) or "label" (only the
  /// top-1 label; hard-label attacks, whose queries may leave the ball). See oracle::Feedback.
  std::string feedback = "scores";
  /// What a hard-label run aims at: "success" (default; stop at the first
  /// adversarial query inside the ball) or "min-distance" (never stop: spend the budget
  /// shrinking the closest adversarial query; records carry distance_at the query
  /// checkpoints, success means that query ended within eps). min-distance needs feedback
  /// "label".
  std::string goal = "success";
  /// Targeted hard-label runs: a folder of the user's start images, one integer-
  /// named sub-folder per class (data::ReadImages). Each target's start is the first image of
  /// its class there that the model classifies as that class (scored as selection setup
  /// queries); records carry start_image_index (within the folder) and start_images. Empty
  /// (default): advbo picks an image of the target class from the attacked data.
  std::string start_images;
  /// Score images before the attacks (default): the model's shape/output probe, the
  /// selection of correctly classified images, the clean accuracy behind a defense and the
  /// re-query of each reported image (each counted in records' setup_queries /
  /// quantized_queries, outside the per-instance budget). false (--no-setup-queries): the
  /// model scores nothing but the attacks' queries: the output kind must be given (logits
  /// or probs), labels are trusted (misclassified images are attacked too), no clean
  /// accuracy is measured and quantized_success comes from the attack's own query of the
  /// reported image (null when that image was never queried, e.g. float queries).
  bool setup_queries = true;
  /// Count "bad queries" (the SaTML 2024 leaderboard's stealth measure): a
  /// Blacklight detector at the paper's setting (defenses/stateful_detector.h, flag mode)
  /// watches every model evaluation of an instance beside the model, changing nothing;
  /// records carry bad_queries and first_bad_query. false (--no-bad-queries): not watched.
  bool bad_queries = true;
};

/// The most lanes --lockstep 0 (auto) picks for a TorchScript model: 8, where the shipped
/// models' frozen graphs reach their best time per image (CIFAR-10, 1 thread: 0.67 ms at batch
/// 8 against 0.95 at batch 1; tools/results/lockstep/).
inline constexpr int kAutoLockstepLanes = 8;

/// The smallest model input (values per image) for which --lockstep 0 batches: 3 x 32 x 32.
/// Measured (tools/results/lockstep/, 3 interleaved repetitions): Square on the shipped
/// CIFAR-10 model ran 1.10x faster with 8 lanes at 1 thread and 1.37x with both cores; on the
/// MNIST models (0.14-0.28 ms per image) a round's synchronisation costs about what batching
/// saves (0.87-0.92x for Square, 0.89-0.94x for BOS^2), so MNIST-size inputs run one job at a
/// time unless --lockstep is given.
inline constexpr int kAutoLockstepMinInput = 3 * 32 * 32;

/// --lockstep 0 for a run of `jobs` jobs (instances x attacks, counted before resuming or
/// sharding, so a resumed run or a shard picks the same B) on a model taking `input_size`
/// values per image: 1 below kAutoLockstepMinInput, else the largest of 1, 2, 4 and 8 that
/// is <= jobs. Powers of two because the shipped models score an image bit for bit the same
/// at any row of a batch of 2, 4 or 8 rows (not of 5, 6 or 7: tests/oracle/lockstep_test.cc).
int AutoLockstepLanes(size_t jobs, int input_size);

/// --workers 0 for a run of `jobs` jobs on a machine with `cores` cores: min(cores, jobs), at
/// least 1. Measured (tools/results/workers/, 3 interleaved repetitions, 2 cores): two groups
/// at one LibTorch thread each against one group at LibTorch's 2 threads, same records:
/// Square on CIFAR-10 (B = 8) 1.33x, on MNIST (B = 1) 1.10x, BOS^2 on MNIST 1.45x, BOS^2 on
/// CIFAR-10 (9 jobs) 1.02x.
int AutoWorkers(size_t jobs, int cores);

/// Largest accepted --threads (more is refused rather than spawning thousands of threads).
inline constexpr int kMaxThreads = 256;
/// Largest accepted --budget (queries per instance): 10^8, far beyond any black-box attack's
/// use, refused above so per-query bookkeeping can never exhaust memory.
inline constexpr long kMaxBudget = 100000000;
/// Largest accepted --http-timeout, seconds (one day).
inline constexpr double kMaxHttpTimeout = 86400;

/// `v` with up to 6 significant digits ("0", "-1", "nan", "0.25") for messages.
std::string FormatNumber(double v);

/// Checks an L_inf radius `v` (pixel units) given as `option`, if set: it must lie in (0, 1]
/// (NaN refused). Throws std::invalid_argument naming the option and the value.
void CheckLinfRadius(const char* option, const std::optional<double>& v);

/// Checks `--indices`: every index >= 0 and none listed twice (a duplicate would attack one
/// instance twice, and a resumed run would disagree with an uninterrupted one). Throws
/// std::invalid_argument naming the index.
void CheckImageIndices(const std::vector<int>& indices);

/// Checks every field that can be checked without loading anything: attack specs parse
/// (MakeAttack with a default context), at most one of untargeted / target, target >= 0,
/// num_images >= 1 if set, classes only with data, indices >= 0 and distinct, eps and defender_eps
/// in (0, 1] and not NaN (eps an L2 radius in (0, kMaxL2Radius] with norm l2), norm linf |
/// l2, feedback scores | label, budget in [1, kMaxBudget], http_timeout in (0, kMaxHttpTimeout],
/// pixels 8bit | float, threads in [0, kMaxThreads], clean_images >= 0, attack specs unique. Throws
/// std::invalid_argument naming the option (as the CLI spells it) and the value. The threat
/// model's options (eps, norm, feedback, pixels) are resolved and checked by the Experiment
/// (ResolveThreatModel), once per run.
void Validate(const ExperimentSpec& spec);

/// Splits a comma list of attack specs. A piece "key=value" with no ':' before its '='
/// continues the previous spec's settings, so "bos2:kernel=matern52,beta=constant:9,square"
/// is two attacks. Empty pieces are skipped; throws std::invalid_argument "<option> names no
/// attack ('<list>')" when nothing is left (`option`: the flag the list came from).
std::vector<std::string> SplitAttackList(const std::string& list,
                                         const std::string& option = "--attacks");

/// The settings a record must share with the running experiment to be resumed from or
/// merged with it: budget, epsilon, seed, model (as recorded), dataset, threat_model,
/// defense ("none" when absent), normalize ("none" when absent), pixels ("float" when
/// absent: records from before 8-bit queries), norm ("linf" when absent), feedback
/// ("scores" when absent), model_graph ("plain" when absent) and lockstep (1 when absent).
nlohmann::json RecordSettings(const nlohmann::json& record);

/// "" when `record` was made with `settings` (RecordSettings of a record of the running
/// experiment), else a message naming the first differing setting and both values.
std::string SettingsMismatch(const nlohmann::json& record, const nlohmann::json& settings);

}  // namespace advbo::experiment
