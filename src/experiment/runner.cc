#include "experiment/runner.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <thread>
#include <utility>

#include "defenses/stateful_detector.h"
#include "experiment/seeds.h"

namespace advbo::experiment {
namespace {

// "label 3 ('cat')" or "label 3" when the data name no classes.
std::string LabelText(const data::ImageSet& images, int y) {
  const bool named = y >= 0 && static_cast<size_t>(y) < images.class_names.size();
  return std::to_string(y) + (named ? " ('" + images.class_names[y] + "')" : "");
}

// Why a selection produced no instance, in the user's terms: which images the model
// misclassified (file, label, the model's class) and, for data that name their classes, the
// class order the labels follow.
std::string NoInstancesMessage(const ExperimentSpec& s, const Selection& sel,
                               const data::ImageSet& images) {
  if (sel.chosen.empty()) {
    std::string skipped;
    for (size_t k = 0; k < sel.skipped.size() && k < 5; ++k) {
      const int i = sel.skipped[k];
      skipped += (k ? "; " : "") + std::string("image ") + std::to_string(i) +
                 (static_cast<size_t>(i) < images.sources.size() ? " (" + images.sources[i] + ")"
                                                                 : std::string()) +
                 " has label " + LabelText(images, images.labels[i]) + ", the model says " +
                 std::to_string(sel.skipped_predictions[k]);
    }
    if (sel.skipped.size() > 5)
      skipped += "; and " + std::to_string(sel.skipped.size() - 5) + " more";
    std::string msg =
        "no attack instances: the model misclassifies every image looked at (only correctly "
        "classified images are attacked): " +
        (skipped.empty() ? std::string("none looked at") : skipped);
    if (!images.class_names.empty() && !s.data.empty())
      msg += s.classes.empty()
                 ? ". The labels follow the class names in sorted order (torchvision's "
                   "ImageFolder convention): " +
                       data::ClassMapping(images) +
                       "; if your model orders its classes differently, give its order with "
                       "--classes NAME,NAME,..."
                 : ". The labels follow --classes: " + data::ClassMapping(images);
    return msg;
  }
  return "no attack instances: every chosen image is already of class " +
         std::to_string(*s.target) +
         " (= --target); choose images of other classes or another target";
}

// The run's threat model from the spec's options (resolved and checked once, here).
ThreatModel ThreatModelOf(const ExperimentSpec& s) {
  return ResolveThreatModel(s.dataset, s.eps, s.norm, s.feedback, s.pixels, s.radius_use,
                            s.option_names, s.rescale_compat);
}

}  // namespace

Experiment::Experiment(ExperimentSpec spec) : spec_(std::move(spec)) {
  Validate(spec_);
  tm_ = ThreatModelOf(spec_);
  dataset_name_ = spec_.data.empty() ? spec_.dataset : spec_.data;
  images_ = LoadImages(spec_.dataset, spec_.data, spec_.format);
  if (!spec_.classes.empty()) data::ApplyClassOrder(&images_, spec_.classes, spec_.data);
  Init();
}

Experiment::Experiment(ExperimentSpec spec, data::ImageSet images,
                       std::unique_ptr<oracle::Classifier> model, const std::string& data_name,
                       std::shared_ptr<oracle::Lockstep> lockstep)
    : spec_(std::move(spec)), lockstep_(std::move(lockstep)) {
  if (!model) throw std::invalid_argument("Experiment: no model");
  Validate(spec_);
  tm_ = ThreatModelOf(spec_);
  spec_.data = data_name == spec_.dataset ? "" : data_name;
  dataset_name_ = data_name;
  images_ = std::move(images);
  model_ = std::move(model);
  model_path_ = model_->path();
  Init();
}

void Experiment::ResolveLanes(size_t jobs) {
  if (lockstep_) {
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    workers_ = spec_.workers > 0 ? spec_.workers : loaded_model_ ? AutoWorkers(jobs, cores) : 1;
    lockstep_->set_groups(workers_);
    // Auto B from one group's share of the jobs.
    const size_t per_group = (jobs + workers_ - 1) / workers_;
    lanes_ =
        spec_.lockstep > 0 ? spec_.lockstep : AutoLockstepLanes(per_group, model_->input_size());
    lockstep_->set_lanes(lanes_);
    whole_threads_ = spec_.threads;
    if (workers_ > 1 && spec_.threads == 0) whole_threads_ = oracle::InferenceThreads();
  } else if (spec_.workers > 1) {
    throw std::invalid_argument("--workers " + std::to_string(spec_.workers) +
                                ": this model is scored one call at a time");
  }
}

void Experiment::CheckAttackFits(const attacks::Attack& attack, const std::string& name) const {
  const std::string mismatch = attacks::ThreatModelMismatch(attack, name, tm_.norm, tm_.feedback);
  if (!mismatch.empty()) throw std::invalid_argument(mismatch);
  if (spec_.untargeted && !attack.supports_untargeted())
    throw std::invalid_argument("attack " + name + " has no untargeted mode");
  if (!spec_.untargeted && !attack.supports_targeted())
    throw std::invalid_argument("attack " + name + " is untargeted only (--untargeted)");
}

void Experiment::LoadOrCheckModel() {
  if (!model_) {
    model_path_ = spec_.model.empty() ? DefaultModelPath(spec_.dataset) : spec_.model;
    if (!oracle::IsModelUrl(model_path_)) lockstep_ = std::make_shared<oracle::Lockstep>(1);
    loaded_model_ = true;
    model_ =
        LoadModelFor(images_, model_path_, spec_.output, spec_.threads, spec_.normalize,
                     oracle::HttpOptions{spec_.http_timeout, spec_.http_retries},
                     spec_.setup_queries, oracle::ParseModelGraph(spec_.model_graph), lockstep_);
  } else if (spec_.lockstep > 1 && !lockstep_) {
    throw std::invalid_argument("--lockstep " + std::to_string(spec_.lockstep) +
                                ": this model is scored one call at a time");
  } else if (model_->channels() != images_.channels || model_->height() != images_.height ||
             model_->width() != images_.width) {
    throw std::invalid_argument(
        "the model takes [N, " + std::to_string(model_->channels()) + ", " +
        std::to_string(model_->height()) + ", " + std::to_string(model_->width()) +
        "] images, the data are [N, " + std::to_string(images_.channels) + ", " +
        std::to_string(images_.height) + ", " + std::to_string(images_.width) + "]");
  }
}

void Experiment::Init() {
  // The run's one threat model (resolved by Validate): everything below and every output
  // reads tm_.
  if (images_.size() == 0) throw data::DataError(dataset_name_ + ": no images");
  if (!spec_.num_images) spec_.num_images = DefaultNumImages(images_, !spec_.data.empty());
  // A latent game defender clips in L_inf: under an L2 ball its default radius is the
  // dataset's L_inf one, not the L2 eps.
  const double defender_eps = spec_.defender_eps.value_or(
      tm_.norm == oracle::Norm::kLinf
          ? tm_.eps
          : DefaultRadius(spec_.dataset, oracle::Norm::kLinf, RadiusUse::kStandard).value_or(0.3));
  defense_ = std::make_unique<DefenseSetup>(spec_.defense, images_, spec_.dataset,
                                            spec_.defender_vae, defender_eps);
  const attacks::AttackContext ctx = ContextFor(images_, spec_.dataset, spec_.data);
  for (const auto& name : spec_.attacks) {
    attacks_.push_back(attacks::MakeAttack(name, ctx));
    CheckAttackFits(*attacks_.back(), name);
  }
  LoadOrCheckModel();
  // Session names of a served model's defenses: one per instance and one for the setup
  // queries, under a prefix new per run (several clients, bench shards, share one server and
  // never meet each other's defense state), or the user's --session (shared on purpose).
  session_prefix_ = !spec_.session.empty() ? spec_.session
                                           : std::to_string(std::random_device{}()) + "-" +
                                                 std::to_string(std::random_device{}());
  if (spec_.target && model_->num_classes() > 0 && *spec_.target >= model_->num_classes())
    throw std::invalid_argument("--target " + std::to_string(*spec_.target) +
                                " but the model has " + std::to_string(model_->num_classes()) +
                                " classes (0.." + std::to_string(model_->num_classes() - 1) + ")");
  const SetupScoring selection_defense = SetupScoringOf(false);
  const long setup0[] = {model_->scored(oracle::QueryPurpose::kSelection),
                         model_->scored(oracle::QueryPurpose::kCleanAccuracy)};
  selection_ = SelectInstances(images_, *model_, spec_.indices, *spec_.num_images, spec_.untargeted,
                               spec_.target.value_or(-1), dataset_name_, selection_defense,
                               spec_.setup_queries);
  if (selection_.instances.empty())
    throw std::invalid_argument(NoInstancesMessage(spec_, selection_, images_));
  if (tm_.feedback == oracle::Feedback::kLabel) ChooseStartImages(selection_defense);
  ResolveLanes(selection_.instances.size() * attacks_.size());
  if (tm_.pixels == oracle::PixelSpace::k8bit) {
    for (int idx : selection_.chosen)
      if (!oracle::OnPixelGrid(images_.image(idx), images_.image_size())) {
        tm_.pixels = oracle::PixelSpace::kFloat;
        pixels_note_ = "image " + std::to_string(idx) + " of " + dataset_name_ +
                       " has pixels off the 1/255 grid (not 8-bit data): queries stay float "
                       "(--pixels float); records say pixels: float";
        break;
      }
    if (tm_.pixels == oracle::PixelSpace::k8bit && !spec_.rescale_compat &&
        oracle::GridRadius(tm_.eps) <= 0)
      throw std::invalid_argument(spec_.option_names.eps + " " + FormatNumber(tm_.eps) +
                                  " is below one 8-bit step (1/255 = 0.00392): no 8-bit image but "
                                  "the clean one lies in the ball; use a larger --eps or "
                                  "--pixels float");
    // 0.031 loses a grid step with 8-bit queries (enforces 7/255): say so.
    if (epsilon_effective() != tm_.eps) pixels_note_ = oracle::GridStepLossWarning(tm_.eps);
  }
  clean_acc_ = defended_acc_ = NAN;
  if (!defense_->empty() && spec_.clean_images > 0 && spec_.setup_queries) {
    clean_acc_ = CleanAccuracy(images_, *model_, spec_.clean_images, SetupScoringOf(true));
    defended_acc_ = CleanAccuracy(images_, *model_, spec_.clean_images, SetupScoringOf(false));
  }
  // A model handed in by the caller (Python) was probed by whoever loaded it; the counts
  // are this run's own (a shared model may have scored images for earlier runs).
  using oracle::QueryPurpose;
  setup_queries_ = {{"shape_probe", model_->scored(QueryPurpose::kShapeProbe)},
                    {"selection", model_->scored(QueryPurpose::kSelection) - setup0[0]},
                    {"clean_accuracy", model_->scored(QueryPurpose::kCleanAccuracy) - setup0[1]}};
}

void Experiment::ChooseStartImages(const SetupScoring& setup) {
  // Targeted hard-label attacks start from an image of the target class.
  start_images_ = spec_.start_images.empty()
                      ? TargetStartImages(images_, *model_, selection_, setup, spec_.setup_queries)
                      : UserStartImages(setup);
  for (const auto& [t, idx] : start_images_)
    if (idx < 0)
      throw std::invalid_argument(
          "a targeted hard-label attack starts from an image of its target class, and none of "
          "the images given is one the model classifies as class " +
          std::to_string(t) + ": give a folder of start images with --start-images DIR" +
          " (one sub-folder per class: " + std::to_string(t) + "/, ...)");
}

SetupScoring Experiment::SetupScoringOf(bool undefended) const {
  SetupScoring s;
  s.defense_seed = SelectionDefenseSeed(spec_.seed);
  if (!undefended) s.transform = defense_->SelectionTransform(s.defense_seed);
  s.session = session_prefix_ + "-setup";
  return s;
}

std::map<int, int> Experiment::UserStartImages(const SetupScoring& setup) {
  const std::string& dir = spec_.start_images;
  try {
    start_set_ = data::ReadImages(dir, images_.channels);
  } catch (const data::DataError& e) {
    throw data::DataError(std::string("--start-images: ") + e.what());
  }
  if (start_set_.height != images_.height || start_set_.width != images_.width)
    throw std::invalid_argument(
        "--start-images " + dir + ": its images are " + std::to_string(start_set_.height) + "x" +
        std::to_string(start_set_.width) + ", the attacked images " +
        std::to_string(images_.height) + "x" + std::to_string(images_.width));
  Selection targets;  // the targets to start, none of the folder's images already scored
  targets.instances = selection_.instances;
  std::map<int, int> start =
      TargetStartImages(start_set_, *model_, targets, setup, spec_.setup_queries);
  for (const auto& [t, idx] : start)
    if (idx < 0)
      throw std::invalid_argument("--start-images " + dir + ": no image of class " +
                                  std::to_string(t) + " (sub-folder " + std::to_string(t) +
                                  "/) that the model classifies as class " + std::to_string(t));
  return start;
}

void Experiment::AddClassNames(nlohmann::json* record) const {
  // Names only for the user's own data (an ImageFolder's sub-folders, a CIFAR-10 batch's
  // meta file); the shipped datasets' records stay as they were.
  if (spec_.data.empty() || images_.class_names.empty()) return;
  const auto name = [&](const char* key) -> nlohmann::json {
    if (!record->contains(key) || !(*record)[key].is_number_integer()) return nullptr;
    const int c = (*record)[key].get<int>();
    return c >= 0 && c < static_cast<int>(images_.class_names.size())
               ? nlohmann::json(images_.class_names[c])
               : nlohmann::json(nullptr);
  };
  (*record)["true_class_name"] = name("true_class");
  (*record)["target_name"] = name("target");
  if (record->contains("adversarial_class"))
    (*record)["adversarial_class_name"] = name("adversarial_class");
}

void Experiment::VerifyQuantized(size_t i, uint64_t instance_seed, const oracle::Referee& orc,
                                 JobResult* out) const {
  const Instance& inst = instances().at(i);
  out->quantized = orc.ball().Quantize(out->result.adversarial);
  const size_t d = out->clean.size();
  // The saved image's scores as the evaluator re-checks them. A label-feedback attack is never
  // told scores, so there they go under a name that says whose they are.
  const char* scores_key =
      tm_.feedback == oracle::Feedback::kLabel ? "evaluator_log_probs" : "adversarial_log_probs";
  out->record["quantized_linf"] =
      oracle::Distance(oracle::Norm::kLinf, out->quantized.data(), out->clean.data(), d);
  if (tm_.norm == oracle::Norm::kL2)
    out->record["quantized_l2"] =
        oracle::Distance(oracle::Norm::kL2, out->quantized.data(), out->clean.data(), d);
  if (spec_.rescale_compat) {
    out->record["quantized_success"] = nullptr;
    out->record["quantized_queries"] = 0;
    out->record["adversarial_class"] = nullptr;
    out->record[scores_key] = nullptr;
    return;
  }
  if (!spec_.setup_queries) {
    // No re-query: the attack's own answer to exactly this image, when it asked for it.
    const Eigen::RowVectorXd* answer = nullptr;
    if (!orc.success_image().empty() && orc.success_image() == out->quantized)
      answer = &orc.success_log_probs();
    else if (!orc.best_image().empty() && orc.best_image() == out->quantized)
      answer = &orc.best_log_probs();
    out->record["quantized_queries"] = 0;
    if (!answer || answer->size() == 0) {
      out->record["quantized_success"] = nullptr;
      out->record["adversarial_class"] = nullptr;
      out->record[scores_key] = nullptr;
      return;
    }
    const oracle::QueryResult saved =
        oracle::ScoreBatch(Eigen::MatrixXd(*answer), inst.label, inst.target);
    out->quantized_success = saved.success[0];
    out->record["quantized_success"] = out->quantized_success;
    out->record["adversarial_class"] = saved.predicted[0];
    out->record[scores_key] = std::vector<double>(answer->data(), answer->data() + answer->size());
    return;
  }
  // One draw of the defense's randomness per re-query (the first with the instance's own
  // defense seed, as a single check always had); behind a randomised defense the verdict is
  // the majority of `draws`.
  const int draws = defense_->randomized() ? spec_.verify_draws : 1;
  int adversarial_draws = 0;
  oracle::QueryResult saved;
  for (int k = 0; k < draws; ++k) {
    const uint64_t seed = k == 0 ? InstanceDefenseSeed(instance_seed)
                                 : bo::DeriveSeed(InstanceDefenseSeed(instance_seed), k);
    oracle::Referee check(*model_, images_.image(inst.index), inst.label, inst.target, tm_.eps, 1);
    const auto defender = defense_->Install(check, seed);
    check.set_context(
        {session_prefix_ + "-verify-" + std::to_string(i) + "-" + std::to_string(verify_counter_++),
         seed, inst.label, inst.target, oracle::QueryPurpose::kVerify});
    oracle::QueryResult r = check.Query(out->quantized.data(), 1);
    adversarial_draws += r.success[0];
    if (k == 0) saved = std::move(r);
  }
  out->quantized_success = 2 * adversarial_draws > draws;
  out->record["quantized_success"] = out->quantized_success;
  out->record["quantized_queries"] = draws;
  if (draws > 1) {
    out->record["quantized_draws"] = draws;
    out->record["quantized_adversarial_draws"] = adversarial_draws;
  }
  // What the model says of the image a user would save (8-bit, inside the ball; through the
  // defense when there is one): its class and log-softmax scores [classes].
  out->record["adversarial_class"] = saved.predicted[0];
  std::vector<double> scores(saved.log_probs.cols());
  for (Eigen::Index c = 0; c < saved.log_probs.cols(); ++c) scores[c] = saved.log_probs(0, c);
  out->record[scores_key] = scores;
}

double Experiment::epsilon_effective() const { return tm_.enforced_eps(); }

std::string Experiment::DescribeRadius() const { return tm_.DescribeRadius(); }

nlohmann::json Experiment::Settings() const {
  return {{"budget", spec_.budget},
          {"epsilon", tm_.eps},
          {"seed", spec_.seed},
          {"model", RecordPath(model_path_)},
          {"dataset", dataset_name_},
          {"threat_model", spec_.rescale_compat ? "rescale_compat" : "clip"},
          {"defense", defense_->Spec()},
          {"normalize", model_->normalization() ? model_->normalization()->Spec() : "none"},
          {"pixels", oracle::PixelSpaceName(tm_.pixels)},
          {"norm", oracle::NormName(tm_.norm)},
          {"feedback", oracle::FeedbackName(tm_.feedback)},
          {"goal", spec_.goal},
          {"model_graph", model_->graph()},
          {"lockstep", lanes_}};
}

void Experiment::RunJobs(size_t n,
                         const std::function<oracle::Lockstep::Commit(size_t)>& job) const {
  if (lanes_ > 1 || workers_ > 1) {
    // One intra-op thread per group's forward pass: the groups use the cores side by side.
    if (workers_ > 1 && spec_.threads == 0 && loaded_model_) oracle::SetInferenceThreads(1);
    return lockstep_->Run(n, job);
  }
  for (size_t k = 0; k < n; ++k)
    if (oracle::Lockstep::Commit commit = job(k)) commit();
}

oracle::LockstepStats Experiment::lockstep_stats() const {
  return lockstep_ ? lockstep_->stats() : oracle::LockstepStats{};
}

namespace {

// Bad queries: a Blacklight detector at the paper's setting in flag mode beside the
// model, fed every image `orc` evaluates; null when the images are too small for its windows
// to ever fire.
std::unique_ptr<defenses::StatefulDetector> WatchBadQueries(oracle::Referee* orc) {
  defenses::BlacklightOptions bl;
  bl.reject = false;
  const int d = static_cast<int>(orc->clean().size());
  try {
    bl.ValidateFor(d);
  } catch (const std::invalid_argument&) {
    return nullptr;
  }
  auto monitor = std::make_unique<defenses::StatefulDetector>(bl);
  orc->set_observer([m = monitor.get(), d](const float* x, long) { m->Observe(x, d); });
  return monitor;
}

}  // namespace

JobResult Experiment::Run(size_t i, size_t j, const attacks::AttackProgress& progress,
                          const JobHooks& hooks) const {
  const Instance& inst = instances().at(i);
  const attacks::Attack& atk = attack(j);
  const uint64_t iseed = hooks.instance_seed.value_or(InstanceSeed(spec_.seed, i));
  bo::Rng rng(iseed);
  const long budget = hooks.budget.value_or(spec_.budget);
  if (budget < 1) throw std::invalid_argument("a job's budget must be >= 1");
  // The instance's eps-ball, built once from the run's threat model.
  oracle::Referee orc(
      *model_, oracle::Ball::Make(tm_.ball(), images_.image(inst.index), images_.image_size()),
      inst.label, inst.target, budget);
  orc.set_feedback_type(tm_.feedback);
  orc.set_min_distance(spec_.goal == "min-distance");
  int start_index = -1;  // a targeted hard-label attack's start: an image of the target class
  if (const auto s = start_images_.find(inst.target); s != start_images_.end() && s->second >= 0) {
    start_index = s->second;
    const data::ImageSet& set = spec_.start_images.empty() ? images_ : start_set_;
    const float* x = set.image(start_index);
    orc.set_start_image(std::vector<float>(x, x + set.image_size()));
  }
  std::shared_ptr<defenses::GameDefense> defender;
  std::function<void(const oracle::QueryResult&)> also;
  if (hooks.on_batch)
    also = [&](const oracle::QueryResult& r) {
      const long first = orc.queries() - static_cast<long>(r.objective.size()) + 1;
      hooks.on_batch(r, first, defender.get());
    };
  defender = defense_->Install(orc, InstanceDefenseSeed(iseed), also);
  orc.set_context({session_prefix_ + "-" + std::to_string(i) + "-" + std::to_string(j) + "-" +
                       std::to_string(run_counter_++),
                   InstanceDefenseSeed(iseed), inst.label, inst.target});
  std::unique_ptr<defenses::StatefulDetector> monitor;
  if (spec_.bad_queries) monitor = WatchBadQueries(&orc);
  JobResult out;
  out.result = atk.Run(orc, rng, progress);
  out.record = InstanceRecord(atk.name(), inst, out.result, orc, spec_.seed, iseed, model_path_,
                              dataset_name_);
  if (inst.target >= 0 && tm_.feedback == oracle::Feedback::kLabel) {
    out.record["start_image_index"] =
        start_index >= 0 ? nlohmann::json(start_index) : nlohmann::json(nullptr);
    if (!spec_.start_images.empty()) out.record["start_images"] = RecordPath(spec_.start_images);
  }
  if (spec_.bad_queries) {
    out.record["bad_queries"] = monitor ? nlohmann::json(monitor->detections()) : nullptr;
    out.record["first_bad_query"] = monitor && monitor->first_detection() > 0
                                        ? nlohmann::json(monitor->first_detection())
                                        : nlohmann::json(nullptr);
  }
  // Under the min-distance goal a success means "within eps": whether the user chose that eps
  // (tables show no success rate for a radius nobody asked for).
  if (orc.min_distance()) out.record["epsilon_given"] = !tm_.eps_default;
  out.record["model_output"] = model_->output_format();
  out.record["model_graph"] = model_->graph();
  // B when this job's model calls were batched in RunJobs' lanes, 1 when scored one by one.
  const bool in_lane = lockstep_ && lockstep_->InLane();
  out.record["lockstep"] = in_lane ? lanes_ : 1;
  out.record["workers"] = in_lane ? workers_ : 1;
  if (!defense_->empty()) {
    out.record["defense"] = defense_->Spec();
    out.record["defended_clean_accuracy"] = defended_acc_;
    out.record["clean_accuracy"] = clean_acc_;
    out.record["clean_images"] =
        std::min<long>(spec_.clean_images, static_cast<long>(images_.size()));
  }
  if (defender) AddDefenderFields(*defender, *defense_, &out.record);
  if (model_->normalization()) out.record["normalize"] = model_->normalization()->Spec();
  if (static_cast<size_t>(inst.index) < images_.sources.size())
    out.record["source"] = RecordPath(images_.sources[inst.index]);
  if (selection_.predicted_labels.count(inst.index))
    out.record["true_class_from"] = "prediction";  // the image had no label
  out.clean = orc.clean();
  out.record["setup_queries"] = setup_queries_;
  VerifyQuantized(i, iseed, orc, &out);
  AddClassNames(&out.record);
  return out;
}

}  // namespace advbo::experiment
