// `advbo attack`: runs a black-box attack (BOS^2) on images of a dataset through a
// TorchScript classifier, writes one JSONL record per attack instance and prints a
// summary table.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "attacks/attack.h"
#include "attacks/bos2/bos2_attack.h"
#include "cli/commands.h"
#include "cli/format.h"
#include "cli/instances.h"
#include "cli/progress.h"
#include "data/datasets.h"
#include "oracle/classifier.h"
#include "oracle/oracle.h"

namespace advbo::cli {
namespace fs = std::filesystem;
namespace {

struct AttackArgs {
  std::string model, dataset, data, format = "auto", attack = "bos2", output = "auto";
  bool rescale_compat = false;
  bool targeted = false, untargeted = false, no_stopping = false, quiet = false, verbose = false;
  int target = -1, threads = 0, num_images = 10, candidates = 0;
  double eps = -1;
  long budget = 900;
  std::vector<int> indices;
  uint64_t seed = 0;
  std::string out, save_images, beta, kernel;  // empty = the attack's own setting
  std::string defense = "none";
  std::string defender_vae;
  double defender_eps = 0;
  int clean_images = 1000;
};

// a.attack plus the BOS^2 flags given as settings ("bos2" + --kernel matern52 ->
// "bos2:kernel=matern52"); throws std::invalid_argument if such a flag is given for
// another attack.
std::string AttackSpec(const AttackArgs& a) {
  std::string extra;
  auto add = [&](const std::string& kv) { extra += (extra.empty() ? "" : ",") + kv; };
  if (a.no_stopping) add("stopping=0");
  if (!a.kernel.empty()) add("kernel=" + a.kernel);
  if (!a.beta.empty()) add("beta=" + a.beta);
  if (a.candidates > 0) add("candidates=" + std::to_string(a.candidates));
  if (extra.empty()) return a.attack;
  const std::string base = a.attack.substr(0, a.attack.find(':'));
  if (base != "bos2" && base != "bos2-nostop")
    throw std::invalid_argument("--kernel, --beta, --candidates and --no-stopping apply to bos2 only");
  return a.attack + (a.attack.find(':') == std::string::npos ? ":" : ",") + extra;
}

int RunAttack(const AttackArgs& a) {
  // ---- Validate everything before any work, so bad input loses nothing.
  {
    const auto names = attacks::AttackNames();
    const std::string base = a.attack.substr(0, a.attack.find(':'));
    if (std::find(names.begin(), names.end(), base) == names.end()) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      throw std::invalid_argument("unknown --attack '" + a.attack + "' (available: " + list + ")");
    }
    attacks::MakeAttack(AttackSpec(a), attacks::AttackContext{});  // validates settings
  }
  if (int(a.targeted) + int(a.untargeted) + int(a.target >= 0) > 1)
    throw std::invalid_argument("choose one of --targeted, --target K, --untargeted");
  if (a.budget < 1) throw std::invalid_argument("--budget must be >= 1");
  const std::string dataset_name = a.data.empty() ? a.dataset : a.data;
  const double eps = EpsilonFor(a.dataset, a.eps);
  if (!a.beta.empty()) bo::ParseExplorationWeight(a.beta);  // validate early
  if (!a.out.empty()) {
    fs::path dir = fs::path(a.out).parent_path();
    if (!dir.empty() && !fs::exists(dir)) fs::create_directories(dir);
  }
  if (!a.save_images.empty()) fs::create_directories(a.save_images);

  data::ImageSet images = LoadImages(a.dataset, a.data, a.format);
  if (images.size() == 0) throw data::DataError(dataset_name + ": no images");
  const DefenseSetup defense(a.defense, images, a.dataset, a.defender_vae,
                             a.defender_eps > 0 ? a.defender_eps : eps);
  std::string model_path = a.model;
  if (model_path.empty()) model_path = DefaultModelPath(a.dataset);
  auto model = LoadModelFor(images, model_path, a.output, a.threads);
  if (a.target >= model->num_classes())
    throw std::invalid_argument("--target " + std::to_string(a.target) + " but the model has " +
                                std::to_string(model->num_classes()) + " classes");

  // ---- Choose images: explicit indices, or the first N correctly classified.
  // Selection and clean accuracy go through the defense (a fixed engine for randomised ones).
  const uint64_t defense_seed = bo::DeriveSeed(a.seed, 0xDEFE45EULL);
  const Selection sel =
      SelectInstances(images, *model, a.indices, a.num_images, a.untargeted, a.target, dataset_name,
                      defense.SelectionTransform(defense_seed));
  double clean_acc = NAN, defended_acc = NAN;
  if (!defense.empty()) {
    clean_acc = CleanAccuracy(images, *model, a.clean_images);
    defended_acc =
        CleanAccuracy(images, *model, a.clean_images, defense.SelectionTransform(defense_seed));
  }
  const std::vector<int>& chosen = sel.chosen;
  const std::vector<int>& skipped = sel.skipped;
  const std::vector<Instance>& instances = sel.instances;
  if (!a.quiet) {
    std::fprintf(stderr,
                 "advbo attack: %s on %s (%zu images), model %s (%s), eps %.4g L_inf, budget %ld, "
                 "seed %llu\n",
                 a.attack.c_str(), dataset_name.c_str(), images.size(), model_path.c_str(),
                 model->outputs_logits() ? "logits" : "probabilities", eps, a.budget,
                 static_cast<unsigned long long>(a.seed));
    std::fprintf(stderr, "  attacking %zu correctly classified images (%zu instances)",
                 chosen.size(), instances.size());
    if (!skipped.empty()) {
      std::fprintf(stderr, "; skipped %zu misclassified: ", skipped.size());
      for (size_t k = 0; k < skipped.size(); ++k)
        std::fprintf(stderr, "%s%d", k ? "," : "", skipped[k]);
    }
    std::fprintf(stderr, "\n");
  }
  if (instances.empty())
    throw std::invalid_argument("no attack instances (no correctly classified image)");

  const attacks::AttackContext ctx = ContextFor(images, a.dataset, a.data);
  // The BOS^2 flags (--kernel, --beta, --candidates, --no-stopping) are settings appended
  // to the attack spec, so the record's "attack" names exactly what ran.
  const std::string spec = AttackSpec(a);
  std::unique_ptr<attacks::Attack> attack = attacks::MakeAttack(spec, ctx);
  if (a.untargeted && !attack->supports_untargeted())
    throw std::invalid_argument("--attack " + a.attack + " has no untargeted mode");

  // ---- Output: write to FILE.partial, renamed to FILE when the run completes.
  std::ofstream jsonl;
  const std::string partial = a.out.empty() ? "" : a.out + ".partial";
  if (!a.out.empty()) {
    jsonl.open(partial);
    if (!jsonl) throw std::runtime_error(a.out + ": cannot write results file");
  }

  ProgressBar bar(static_cast<long>(instances.size()), !a.quiet);
  std::vector<double> success_queries, all_queries, seconds, model_secs;
  long successes = 0;
  for (size_t k = 0; k < instances.size(); ++k) {
    const Instance& inst = instances[k];
    bo::Rng rng(bo::DeriveSeed(a.seed, k));
    oracle::QueryOracle orc(*model, images.image(inst.index), inst.label, inst.target, eps,
                            a.budget);
    orc.set_rescale_compat(a.rescale_compat);
    const auto defender =
        defense.Install(orc, bo::DeriveSeed(bo::DeriveSeed(a.seed, k), 0xDEFE45EULL));
    // `finished`: instances whose outcome is in `successes` (k while instance k runs).
    auto status = [&](size_t finished, long q, double best) {
      char b[160];
      std::snprintf(b, sizeof(b), "ASR %s%% | inst %zu q=%ld best y=%.3f",
                    finished ? Fmt(100.0 * successes / finished, 1).c_str() : "-", k + 1, q, best);
      return std::string(b);
    };
    attacks::AttackResult r = attack->Run(
        orc, rng, [&](long q, double best) { bar.Update(k, status(k, q, best), false); });
    successes += r.success;
    if (r.success) success_queries.push_back(static_cast<double>(r.queries));
    all_queries.push_back(r.success ? r.queries : static_cast<double>(a.budget));
    seconds.push_back(r.seconds);
    model_secs.push_back(r.model_seconds);

    nlohmann::json rec = InstanceRecord(spec, inst, r, orc, a.seed, bo::DeriveSeed(a.seed, k),
                                        model_path, dataset_name);
    if (!defense.empty()) rec["defense"] = defense.Spec();
    if (defender) AddDefenderFields(*defender, defense, &rec);
    if (jsonl.is_open()) {
      jsonl << rec.dump() << "\n";
      jsonl.flush();
    }
    if (a.verbose) {
      std::string dims;
      if (r.details.contains("loops"))
        for (const auto& l : r.details["loops"])
          dims += std::to_string(l["latent_dim"].get<int>()) +
                  (l["stopped_early"].get<bool>() ? "(stop)" : "") + " ";
      std::fprintf(stderr, "\n  image %d %d->%s: %s after %ld queries, y=%.3f, dims %s\n",
                   inst.index, inst.label,
                   inst.target >= 0 ? std::to_string(inst.target).c_str() : "any",
                   r.success ? "SUCCESS" : "failed", r.queries, r.best_objective, dims.c_str());
    }
    if (!a.save_images.empty()) {
      const std::string tag = std::to_string(inst.index) + "_t" +
                              (inst.target >= 0 ? std::to_string(inst.target) : "u");
      const int c = images.channels, h = images.height, w = images.width;
      std::vector<float> amp(r.adversarial.size());
      for (size_t i = 0; i < amp.size(); ++i)
        amp[i] = static_cast<float>(0.5 + (r.adversarial[i] - orc.clean()[i]) / (2 * eps));
      const fs::path dir(a.save_images);
      data::WritePng((dir / ("clean_" + tag + ".png")).string(), orc.clean().data(), c, h, w);
      data::WritePng((dir / ("adversarial_" + tag + ".png")).string(), r.adversarial.data(), c, h,
                     w);
      data::WritePng((dir / ("perturbation_" + tag + ".png")).string(), amp.data(), c, h, w);
    }
    bar.Update(k + 1, status(k + 1, r.queries, r.best_objective), true);
  }
  bar.Finish();
  if (jsonl.is_open()) {
    jsonl.close();
    fs::rename(partial, a.out);
  }

  // ---- Summary table.
  const double n = static_cast<double>(instances.size());
  const double total_s = std::accumulate(seconds.begin(), seconds.end(), 0.0);
  const double model_s = std::accumulate(model_secs.begin(), model_secs.end(), 0.0);
  const double mx = success_queries.empty()
                        ? NAN
                        : *std::max_element(success_queries.begin(), success_queries.end());
  const double mean_s = success_queries.empty()
                            ? NAN
                            : std::accumulate(success_queries.begin(), success_queries.end(), 0.0) /
                                  success_queries.size();
  std::printf("\n%-26s %s\n", "attack", a.attack.c_str());
  std::printf("%-26s %s (eps %.4g L_inf, budget %ld, %s, seed %llu)\n", "data",
              dataset_name.c_str(), eps, a.budget,
              a.untargeted ? "untargeted" : (a.target >= 0 ? "single target" : "all targets"),
              static_cast<unsigned long long>(a.seed));
  if (!defense.empty())
    std::printf("%-26s %s (clean accuracy %s %% defended, %s %% undefended, first %d images)\n",
                "defense", defense.Spec().c_str(), Fmt(100.0 * defended_acc, 2).c_str(),
                Fmt(100.0 * clean_acc, 2).c_str(),
                static_cast<int>(std::min<size_t>(images.size(), a.clean_images)));
  std::printf("%-26s %zu\n", "instances", instances.size());
  std::printf("%-26s %s %% (%ld/%zu)\n", "ASR", Fmt(100.0 * successes / n, 1).c_str(), successes,
              instances.size());
  std::printf("%-26s %s / %s / %s\n", "queries max/mean/median", Fmt(mx, 0).c_str(),
              Fmt(mean_s, 1).c_str(), Fmt(Median(success_queries), 1).c_str());
  std::printf("%-26s %s\n", "mean queries (fail=budget)",
              Fmt(std::accumulate(all_queries.begin(), all_queries.end(), 0.0) / n, 1).c_str());
  std::printf("%-26s %s s (model %s s = %s %%, BO %s s)\n", "seconds per instance",
              Fmt(total_s / n, 2).c_str(), Fmt(model_s / n, 2).c_str(),
              Fmt(total_s > 0 ? 100.0 * model_s / total_s : NAN, 1).c_str(),
              Fmt((total_s - model_s) / n, 2).c_str());
  if (!a.out.empty()) std::printf("%-26s %s\n", "records", a.out.c_str());
  return 0;
}

}  // namespace

std::function<int()> RegisterAttackCommand(CLI::App& app) {
  auto args = std::make_shared<AttackArgs>();
  CLI::App* cmd = app.add_subcommand(
      "attack",
      "Run a black-box attack on dataset images through a TorchScript classifier.\n"
      "Only correctly classified images are attacked. Writes one JSONL record per instance\n"
      "(--out) and prints a summary table (ASR, queries, time split model/BO).");
  cmd->add_option("--model", args->model,
                  "TorchScript classifier (float32 NCHW in [0,1] -> [N, classes]); default: "
                  "the shipped models/<dataset>_cw.pt");
  cmd->add_option("--dataset", args->dataset, "shipped dataset: mnist | cifar10")
      ->check(CLI::IsMember({"mnist", "cifar10"}))
      ->default_val("mnist");
  cmd->add_option("--data", args->data,
                  "your own data instead: MNIST IDX images file (labels found beside it), "
                  "CIFAR-10 .bin batch, or an image file/folder (folder/<label>/*.png)");
  cmd->add_option("--format", args->format, "format of --data: auto | mnist | cifar10 | images")
      ->default_val("auto");
  cmd->add_option(
         "--attack", args->attack,
         "attack: bos2 | bos2-nostop | bayesopt | bayesopt-learnd | genattack | zoo | autozoom |\n"
         "square | parsimonious | random; BOS^2 settings as bos2:key=value,... (e.g.\n"
         "bos2:preset=thesis, bos2:kernel=matern52,beta=constant:9; see README)")
      ->default_val("bos2");
  cmd->add_flag("--targeted", args->targeted, "targeted attack on every other class (default)");
  cmd->add_option("--target", args->target, "targeted attack on this one class");
  cmd->add_flag("--untargeted", args->untargeted, "untargeted attack (argmax != true class)");
  cmd->add_option("--eps", args->eps,
                  "L_inf radius in [0,1] pixel units (default 0.3 MNIST, 0.05 CIFAR-10)");
  cmd->add_option("--budget", args->budget, "maximum queries per instance (T)")->default_val(900);
  cmd->add_option("--num-images,-n", args->num_images,
                  "attack the first N correctly classified images")
      ->default_val(10);
  cmd->add_option("--indices", args->indices, "attack these image indices instead (comma list)")
      ->delimiter(',');
  cmd->add_option("--seed", args->seed, "run seed; instance k uses a seed derived from it")
      ->default_val(0);
  cmd->add_option("--threads", args->threads, "LibTorch intra-op threads (0 = default)")
      ->default_val(0);
  cmd->add_option("--output", args->output, "model output: auto | logits | probs")
      ->default_val("auto");
  cmd->add_option("--defense", args->defense,
                  "input-transformation defense in front of the model, e.g. jpeg:quality=75, "
                  "bits:depth=4, median:size=3, blur:sigma=1, noise:sigma=0.02, resize:ratio=0.1; "
                  "compose with + (default none); or a defender that plays a repeated game "
                  "against the attack, one round per query: r2b2:latent (R2-B2 level-1 VAE-latent "
                  "moves, Dai 2021 Sec. 8.4.2.2), r2b2:jpeg+noise (tunable: jpeg, bits, blur, "
                  "noise, resize), random:... (level 0, random moves)")
      ->default_val("none");
  cmd->add_option("--defender-vae", args->defender_vae,
                  "VAE of a game defender (default models/<dataset>_vae.pt)");
  cmd->add_option("--defender-eps", args->defender_eps,
                  "latent game defender: L_inf clip of its image around the attacker's (default "
                  "the attack's eps)");
  cmd->add_option("--clean-images", args->clean_images,
                  "images for the defended model's clean accuracy")
      ->default_val(1000);
  cmd->add_option("--beta", args->beta,
                  "BOS^2 Add-GP-UCB exploration weight: kandasamy2015 | srinivas2010 | constant:V\n"
                  "(default: the bos2 configuration's, kandasamy2015; = bos2:beta=...)");
  cmd->add_flag("--rescale-compat", args->rescale_compat,
                "reproduce the BayesOpt reference code's (x+delta+eps)/(1+2eps) rescaling instead "
                "of clipping: a LOOSER threat model (L_inf up to 2eps/(1+2eps)); for comparisons");
  cmd->add_option("--kernel", args->kernel,
                  "BOS^2 kernel of the additive perturbation GP: se | matern52 (= bos2:kernel=...)")
      ->check(CLI::IsMember({"se", "matern52"}));
  cmd->add_option("--candidates", args->candidates,
                  "BOS^2 random candidates per additive group with fresh candidates, pool=0 "
                  "(= bos2:candidates=N)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--no-stopping", args->no_stopping,
                "BOS^2 without Bayesian optimal stopping (ablation; = bos2:stopping=0)");
  cmd->add_option("--out,-o", args->out, "JSONL results file (one record per instance)");
  cmd->add_option("--save-images", args->save_images,
                  "folder for clean / adversarial / amplified-perturbation PNGs");
  cmd->add_flag("-q,--quiet", args->quiet, "no progress bar or banner");
  cmd->add_flag("-v,--verbose", args->verbose, "one line per instance with the latent dimensions");
  return [cmd, args]() { return cmd->parsed() ? RunAttack(*args) : 0; };
}

}  // namespace advbo::cli
