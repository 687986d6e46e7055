#include "experiment/setup.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "experiment/spec.h"
#include "experiment/summary.h"

#ifndef ADVBO_SOURCE_DIR
#define ADVBO_SOURCE_DIR "."
#endif

namespace advbo::experiment {
namespace fs = std::filesystem;

fs::path RepoRoot() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (fs::path p = exe.parent_path(); !p.empty() && p != p.root_path(); p = p.parent_path())
      if (fs::exists(p / "data" / "mnist") && fs::exists(p / "models")) return p;
  }
  return fs::path(ADVBO_SOURCE_DIR);
}

std::string RecordPath(const std::string& path) {
  // URLs and in-memory models ("python:f") are names, not paths.
  if (oracle::IsModelUrl(path) || !fs::exists(path)) return path;
  std::error_code ec;
  const fs::path abs = fs::weakly_canonical(fs::absolute(path, ec), ec);
  const fs::path root = fs::weakly_canonical(RepoRoot(), ec);
  if (ec) return path;
  const fs::path rel = abs.lexically_relative(root);
  if (rel.empty() || *rel.begin() == "..") return path;
  return rel.string();
}

std::string DefaultModelPath(const std::string& dataset) {
  return (RepoRoot() / "models" / (dataset == "cifar10" ? "cifar10_cw.pt" : "mnist_cw.pt"))
      .string();
}

data::ImageSet LoadImages(const std::string& dataset, const std::string& data_path,
                          const std::string& format) {
  const fs::path root = RepoRoot();
  if (!data_path.empty()) {
    std::string fmt = format;
    const fs::path p(data_path);
    if (fmt == "auto") {
      const std::string name = p.filename().string();
      if (name.find("idx3") != std::string::npos)
        fmt = "mnist";
      else if (p.extension() == ".bin")
        fmt = "cifar10";
      else
        fmt = "images";
    }
    if (fmt == "mnist") {
      std::string labels = data_path;
      auto pos = labels.find("images-idx3");
      if (pos == std::string::npos)
        throw data::DataError(data_path +
                              ": cannot derive the labels file name (expected "
                              "'*-images-idx3-ubyte[.gz]')");
      labels.replace(pos, 11, "labels-idx1");
      return data::ReadMnist(data_path, labels);
    }
    if (fmt == "cifar10") {
      data::ImageSet s = data::ReadCifar10({data_path});
      s.class_names = data::ReadClassNames((p.parent_path() / "batches.meta.txt").string());
      return s;
    }
    if (fmt == "images") return data::ReadImages(data_path);
    throw std::invalid_argument("unknown --format '" + fmt + "' (auto, mnist, cifar10, images)");
  }
  if (dataset == "mnist")
    return data::ReadMnist((root / "data/mnist/t10k-images-idx3-ubyte.gz").string(),
                           (root / "data/mnist/t10k-labels-idx1-ubyte.gz").string());
  if (dataset == "cifar10") {
    data::ImageSet s =
        data::ReadCifar10({(root / "data/cifar10/test_batch_first2000.bin").string()});
    s.class_names = data::ReadClassNames((root / "data/cifar10/batches.meta.txt").string());
    return s;
  }
  throw std::invalid_argument("--dataset must be mnist or cifar10 (or give --data PATH)");
}

int DefaultNumImages(const data::ImageSet& images, bool user_data) {
  return user_data && !images.sources.empty() ? static_cast<int>(images.size()) : 10;
}

attacks::AttackContext ContextFor(const data::ImageSet& images, const std::string& dataset,
                                  const std::string& data) {
  attacks::AttackContext ctx;
  ctx.dataset = data.empty() ? dataset : "custom";
  ctx.channels = images.channels;
  ctx.height = images.height;
  ctx.width = images.width;
  return ctx;
}

std::unique_ptr<oracle::Classifier> LoadModelFor(const data::ImageSet& images,
                                                 const std::string& path, const std::string& output,
                                                 int threads, const std::string& normalize,
                                                 const oracle::HttpOptions& http, bool probe,
                                                 oracle::ModelGraph graph,
                                                 std::shared_ptr<oracle::Lockstep> lockstep) {
  oracle::ClassifierOptions copt;
  if (!normalize.empty()) copt.normalize = oracle::Normalization::Parse(normalize);
  copt.http = http;
  copt.output = oracle::ParseOutputKind(output);
  copt.channels = images.channels;
  copt.height = images.height;
  copt.width = images.width;
  copt.threads = threads;
  copt.probe = probe;
  copt.graph = graph;
  copt.lockstep = std::move(lockstep);
  if (!probe) copt.classes = images.class_names.empty() ? 0 : ClassCountOf(images);
  return oracle::Classifier::Load(path, copt);
}

int ClassCountOf(const data::ImageSet& images) {
  if (!images.class_names.empty()) return std::max<int>(2, images.class_names.size());
  int top = 1;
  for (int y : images.labels) top = std::max(top, y);
  return top + 1;
}

namespace {

// Argmax classes of the images `idx`, evaluated in one batch behind `setup`'s transform (if
// any) in its session, counted by the model under `purpose`. A served defense that refuses
// some of them is a RefusedError naming them: a refused image is not a misclassified one.
std::vector<int> Classify(const data::ImageSet& images, const oracle::Classifier& model,
                          const std::vector<int>& idx, const SetupScoring& setup,
                          oracle::QueryPurpose purpose) {
  std::vector<float> batch;
  for (int i : idx) {
    const float* p = images.image(i);
    batch.insert(batch.end(), p, p + images.image_size());
  }
  if (setup.transform) setup.transform(batch.data(), static_cast<int>(idx.size()));
  oracle::QueryContext context;
  context.purpose = purpose;
  context.session = setup.session;
  context.defense_seed = setup.defense_seed;
  const oracle::Classifier::Answered a =
      model.Answer(batch.data(), static_cast<int>(idx.size()), &context);
  std::string refused;
  int count = 0;
  for (size_t k = 0; k < a.refused.size(); ++k)
    if (a.refused[k]) refused += (count++ ? ", " : "") + std::to_string(idx[k]);
  if (count)
    throw oracle::RefusedError(
        model.path() + ": the served model's defense refused " + std::to_string(count) + " of " +
        std::to_string(idx.size()) + " " + oracle::QueryPurposeName(purpose) + " queries (images " +
        refused + "): a stateful detector in front of it took them for repeats of queries it saw" +
        (setup.session.empty() ? std::string() : " in session '" + setup.session + "'") +
        ". Unanswered, they say nothing of the model's accuracy. advbo serve answers a run's "
        "setup queries without its detector; against another server, start a fresh session "
        "(--session NAME) or use --no-setup-queries");
  std::vector<int> pred(idx.size());
  for (size_t k = 0; k < idx.size(); ++k) a.log_probs.row(k).maxCoeff(&pred[k]);
  return pred;
}

// Why image i's label (>= 0: unlabelled images take the model's prediction) cannot be used:
// it lies outside the model's classes. Names the image's file when known.
std::string LabelProblem(const data::ImageSet& images, int i, int classes,
                         const std::string& dataset_name) {
  const bool has_source = static_cast<size_t>(i) < images.sources.size();
  return dataset_name + ": image " + std::to_string(i) +
         (has_source ? " (" + images.sources[i] + ")" : "") + " has label " +
         std::to_string(images.labels[i]) + ", outside the model's " + std::to_string(classes) +
         " classes (0.." + std::to_string(classes - 1) + ")";
}

}  // namespace

DefenseSetup::DefenseSetup(const std::string& spec, const data::ImageSet& images,
                           const std::string& dataset, const std::string& vae_path, double eps)
    : c_(images.channels), h_(images.height), w_(images.width), eps_(eps) {
  if (!(eps > 0 && eps <= 1))
    throw std::invalid_argument("--defender-eps must be in (0, 1], got " + std::to_string(eps));
  if (!defenses::IsGameDefense(spec)) {
    fixed_ = defenses::ParseDefense(spec);
    if (fixed_.detector()) fixed_.detector()->ValidateFor(c_ * h_ * w_);
    return;
  }
  game_ = std::make_unique<defenses::GameDefenseSpec>(defenses::ParseGameDefense(spec));
  const std::string path =
      vae_path.empty() ? (RepoRoot() / "models" / (dataset + "_vae.pt")).string() : vae_path;
  if (game_->latent || !vae_path.empty() || std::filesystem::exists(path))
    vae_ = oracle::Autoencoder::Load(path, c_, h_, w_);
}

std::string DefenseSetup::Spec() const { return game_ ? game_->Spec() : fixed_.Spec(); }

std::function<void(float*, int)> DefenseSetup::SelectionTransform(uint64_t seed) const {
  // The input stages of an instance defense (its output stages and detector unused).
  return ForInstance(seed).transform;
}

std::shared_ptr<defenses::GameDefense> DefenseSetup::MakeDefender(uint64_t seed) const {
  defenses::GameDefenseOptions o;
  o.level = game_->agent == "r2b2" ? 1 : 0;
  o.epsilon = eps_;
  o.seed = seed;
  return std::make_shared<defenses::GameDefense>(*game_, vae_.get(), c_, h_, w_, o);
}

DefenseSetup::InstanceDefense DefenseSetup::ForInstance(uint64_t seed) const {
  InstanceDefense out;
  if (!game_) {
    if (fixed_.empty()) return out;
    // One engine for the instance's input and output stages.
    auto rng = std::make_shared<bo::Rng>(seed);
    auto fixed = fixed_;
    const int c = c_, h = h_, w = w_;
    if (fixed.has_input())
      out.transform = [fixed, rng, c, h, w](float* x, int n) { fixed.Apply(x, n, c, h, w, *rng); };
    if (fixed.has_output())
      out.output = [fixed, rng](Eigen::MatrixXd* lp) { fixed.ApplyOutput(lp, *rng); };
    if (fixed.detector()) {
      auto det = std::make_shared<defenses::StatefulDetector>(*fixed.detector());
      const int d = c * h * w;
      out.detector = det;
      out.reject = fixed.detector()->reject;
      out.monitor = [det, d](const float* x, int n) {
        std::vector<bool> v(n);
        for (int b = 0; b < n; ++b) v[b] = det->Observe(x + static_cast<size_t>(b) * d, d);
        return v;
      };
    }
    return out;
  }
  auto d = MakeDefender(seed);
  auto vae = vae_;
  out.transform = [d, vae](float* x, int n) { d->Transform(x, n); };
  out.feedback = [d](const oracle::QueryResult& r) { d->Feedback(r); };
  out.defender = d;
  return out;
}

std::unique_ptr<oracle::DefendedModel> DefenseSetup::InstanceDefense::Chain(
    const oracle::Classifier& model, int true_class, int target) const {
  auto chain =
      oracle::WithOutputStage(oracle::WithInputStage(oracle::Undefended(model), transform), output);
  if (monitor) chain = oracle::WithDetector(std::move(chain), monitor, reject);
  return oracle::WithLearner(std::move(chain), feedback, true_class, target);
}

std::shared_ptr<defenses::GameDefense> DefenseSetup::Install(
    oracle::Referee& orc, uint64_t seed,
    std::function<void(const oracle::QueryResult&)> also) const {
  InstanceDefense def = ForInstance(seed);
  orc.set_defense(def.Chain(orc.model(), orc.true_class(), orc.target()));
  orc.set_batch_observer(std::move(also));
  return def.defender;
}

void AddDefenderFields(const defenses::GameDefense& defender, const DefenseSetup& setup,
                       nlohmann::json* rec) {
  (*rec)["defender"] = {{"spec", defender.spec().Spec()}, {"vae", RecordPath(setup.vae_path())}};
  (*rec)["defender_rounds"] = defender.rounds();
  if (defender.rounds() == 0) return;
  const Eigen::VectorXd mean = defender.Actions().colwise().mean().transpose();
  (*rec)["defender_mean_action"] = std::vector<double>(mean.data(), mean.data() + mean.size());
  if (!defender.spec().latent) (*rec)["defender_mean_pipeline"] = defender.PipelineFor(mean).Spec();
}

double CleanAccuracy(const data::ImageSet& images, const oracle::Classifier& model, int n,
                     const SetupScoring& setup) {
  const int total = static_cast<int>(std::min<size_t>(images.size(), std::max(n, 0)));
  int correct = 0, counted = 0;
  for (int start = 0; start < total; start += 200) {
    std::vector<int> idx;
    for (int i = start; i < std::min(total, start + 200); ++i) idx.push_back(i);
    const std::vector<int> pred =
        Classify(images, model, idx, setup, oracle::QueryPurpose::kCleanAccuracy);
    for (size_t k = 0; k < idx.size(); ++k) {
      if (images.labels[idx[k]] < 0) continue;
      correct += pred[k] == images.labels[idx[k]];
      ++counted;
    }
  }
  return counted ? static_cast<double>(correct) / counted : 0.0;
}

std::map<int, int> TargetStartImages(const data::ImageSet& images, const oracle::Classifier& model,
                                     const Selection& selection, const SetupScoring& setup,
                                     bool classify) {
  std::map<int, int> start;
  for (const Instance& inst : selection.instances)
    if (inst.target >= 0) start.emplace(inst.target, -1);
  for (auto& [t, idx] : start) {
    for (int i : selection.chosen)
      if (images.labels[i] == t) {
        idx = i;
        break;
      }
    std::vector<int> candidates;
    for (size_t i = 0; idx < 0 && i < images.size() && candidates.size() < 1000; ++i)
      if (images.labels[i] == t) candidates.push_back(static_cast<int>(i));
    for (size_t b = 0; idx < 0 && b < candidates.size(); b += 20) {
      const std::vector<int> block(candidates.begin() + b,
                                   candidates.begin() + std::min(candidates.size(), b + 20));
      const std::vector<int> pred =
          classify ? Classify(images, model, block, setup, oracle::QueryPurpose::kSelection)
                   : std::vector<int>(block.size(), t);
      for (size_t k = 0; k < block.size(); ++k)
        if (pred[k] == t) {
          idx = block[k];
          break;
        }
    }
  }
  return start;
}

Selection SelectInstances(const data::ImageSet& images, const oracle::Classifier& model,
                          const std::vector<int>& indices, int num_images, bool untargeted,
                          int target, const std::string& dataset_name, const SetupScoring& setup,
                          bool classify) {
  Selection sel;
  for (int i : indices)
    if (i < 0 || static_cast<size_t>(i) >= images.size())
      throw std::invalid_argument("--indices: " + std::to_string(i) + " outside 0.." +
                                  std::to_string(images.size() - 1));
  const bool explicit_list = !indices.empty();
  size_t start = 0;
  while (start < (explicit_list ? indices.size() : images.size())) {
    std::vector<int> idx;
    if (explicit_list) {
      idx.assign(indices.begin() + start, indices.begin() + std::min(indices.size(), start + 200));
    } else {
      const int needed = num_images - static_cast<int>(sel.chosen.size());
      if (needed <= 0) break;
      // Only as many images as still needed (at most 200 a batch): every classified image is
      // a setup query (QueryPurpose::kSelection), and the chosen ones are the same whatever
      // the batch size (the first num_images correctly classified).
      const size_t block = classify ? std::min<size_t>(200, needed) : needed;
      for (size_t i = start; i < std::min(images.size(), start + block); ++i)
        idx.push_back(static_cast<int>(i));
    }
    start += idx.size();
    std::vector<int> pred(idx.size(), -1);
    if (classify) pred = Classify(images, model, idx, setup, oracle::QueryPurpose::kSelection);
    for (size_t k = 0; k < idx.size(); ++k) {
      int label = images.labels[idx[k]];
      if (label < 0) {
        if (!classify)
          throw data::DataError(
              dataset_name + ": image " + std::to_string(idx[k]) +
              (static_cast<size_t>(idx[k]) < images.sources.size()
                   ? " (" + images.sources[idx[k]] + ")"
                   : std::string()) +
              " has no label; without setup queries (--no-setup-queries) every image needs one "
              "(an unlabelled image takes the model's prediction, which costs a query)");
        // An image without a label (a single file, or directly in the folder): its class is
        // the one the model gives it, and the attack moves it away from that.
        label = pred[k];
        sel.predicted_labels[idx[k]] = label;
      }
      if (model.num_classes() > 0 && label >= model.num_classes())
        throw data::DataError(LabelProblem(images, idx[k], model.num_classes(), dataset_name));
      const bool room = explicit_list || static_cast<int>(sel.chosen.size()) < num_images;
      if (!room) continue;
      if (!classify || pred[k] == label)
        sel.chosen.push_back(idx[k]);
      else
        sel.skipped.push_back(idx[k]), sel.skipped_predictions.push_back(pred[k]);
    }
  }
  for (int i : sel.chosen) {
    const auto p = sel.predicted_labels.find(i);
    const int y = p != sel.predicted_labels.end() ? p->second : images.labels[i];
    if (untargeted) {
      sel.instances.push_back({i, y, -1});
    } else if (target >= 0) {
      if (target != y) sel.instances.push_back({i, y, target});
    } else {
      if (model.num_classes() == 0)
        throw std::invalid_argument(
            "targets on every other class need the model's class count, which a run without "
            "setup queries does not probe: use --untargeted or --target K");
      for (int t = 0; t < model.num_classes(); ++t)
        if (t != y) sel.instances.push_back({i, y, t});
    }
  }
  return sel;
}

nlohmann::json InstanceRecord(const std::string& attack, const Instance& inst,
                              const attacks::AttackResult& r, const oracle::Referee& orc,
                              uint64_t seed, uint64_t instance_seed, const std::string& model_path,
                              const std::string& dataset_name) {
  double linf = 0, l2 = 0;
  for (size_t i = 0; i < r.adversarial.size(); ++i) {
    const double dlt = r.adversarial[i] - orc.clean()[i];
    linf = std::max(linf, std::abs(dlt));
    l2 += dlt * dlt;
  }
  nlohmann::json rec;
  rec["image_index"] = inst.index;
  rec["true_class"] = inst.label;
  rec["target"] = inst.target >= 0 ? nlohmann::json(inst.target) : nlohmann::json(nullptr);
  rec["attack"] = attack;
  rec["success"] = r.success;
  // Model evaluations: behind EOT (k samples per query, details' eot_samples) the wrapper
  // has turned the first success's index into model evaluations, and the referee counts
  // every sample.
  rec["queries"] = r.queries;
  rec["queries_used"] = orc.model_queries();
  rec["budget"] = orc.model_budget();
  rec["budget_unit"] = BudgetUnit(BudgetUse::kAttack);
  if (const oracle::DetectorCounts det = orc.detector(); det.monitored) {
    // A stateful detector watched this instance's queries (blacklight).
    rec["detections"] = det.detections;
    rec["first_detection"] =
        det.first_detection > 0 ? nlohmann::json(det.first_detection) : nlohmann::json(nullptr);
  }
  rec["epsilon"] = orc.epsilon();
  // The radius enforced: 8-bit L_inf queries keep to the grid radius.
  rec["epsilon_effective"] = orc.ball().EnforcedRadius();
  rec["linf"] = linf;
  rec["l2"] = std::sqrt(l2);
  rec["final_objective"] = r.best_objective;
  for (const auto& [key, value] : r.details.items()) rec[key] = value;
  rec["threat_model"] = orc.rescale_compat() ? "rescale_compat" : "clip";
  rec["pixels"] = oracle::PixelSpaceName(orc.pixel_space());
  rec["norm"] = oracle::NormName(orc.norm());
  rec["feedback"] = oracle::FeedbackName(orc.feedback_type());
  if (orc.feedback_type() == oracle::Feedback::kLabel) {
    // Hard-label runs: the closest adversarial query (null before one) and its curve.
    rec["distance"] = std::isfinite(orc.best_distance()) ? nlohmann::json(orc.best_distance())
                                                         : nlohmann::json(nullptr);
    nlohmann::json trace = nlohmann::json::array();
    for (const auto& [q, dist] : orc.distance_trace()) trace.push_back({q, dist});
    rec["distance_trace"] = trace;
    if (orc.min_distance()) {
      // The min-distance goal: the run spent its budget; its distance at each
      // query checkpoint within the budget.
      rec["goal"] = "min-distance";
      rec["distance_at"] = DistanceAtCheckpoints(orc.distance_trace(), orc.budget());
    }
  }
  rec["seconds"] = r.seconds;
  rec["model_seconds"] = r.model_seconds;
  rec["wait_seconds"] = r.wait_seconds;
  rec["bo_seconds"] = r.bo_seconds;
  rec["seed"] = seed;
  rec["instance_seed"] = instance_seed;
  rec["model"] = RecordPath(model_path);
  rec["dataset"] = dataset_name;
  rec["blas"] = oracle::BlasLibrary();  // model scores depend on it in the last bits
  return rec;
}

}  // namespace advbo::experiment
