// `advbo evaluate`: worst-case robust accuracy of a (defended) model over an ensemble of
// black-box attacks, AutoAttack's protocol (Croce & Hein, ICML 2020) with score-based
// attacks: per image the attacks run cheapest first, each with the full budget, and stop at
// the first one whose saved 8-bit image is adversarial. The per-image verdicts and the
// summary come from experiment/evaluate.h; this file parses, runs the jobs and prints.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cli/commands.h"
#include "cli/experiment_options.h"
#include "cli/format.h"
#include "cli/interrupt_hint.h"
#include "cli/parse.h"
#include "cli/progress.h"
#include "data/datasets.h"
#include "defenses/defense.h"
#include "defenses/game_defense.h"
#include "experiment/evaluate.h"
#include "experiment/records.h"
#include "experiment/runner.h"

namespace advbo::cli {
namespace fs = std::filesystem;
namespace {

struct EvaluateArgs : ExperimentArgs {
  std::string out_dir;
  std::string ensemble;  ///< "" = DefaultEnsemble of the threat model
  bool no_adaptive = false;
  std::string shard = "1/1";
  bool quiet = false;
};

std::string Pct(double v) { return Fmt(100.0 * v, 1) + " %"; }

// The ensemble of a threat model (--norm, --feedback), cheapest first: the score-based L_inf
// ensemble, the L2 pair, or the hard-label attacks of that norm.
std::string DefaultEnsemble(const std::string& norm, const std::string& feedback) {
  if (feedback == "label") return norm == "l2" ? "hsja,sign-opt,geoda" : "rays,bo-hl,hsja";
  return norm == "l2" ? "simba-dct,square-l2" : "square,parsimonious,bos2";
}

// What a run of `advbo evaluate` attacks: the experiment's spec (every image of the run, so
// each instance keeps its seed whatever the shard), the ensemble in order (the defense's
// adaptive attack last), all images looked at and this shard's.
struct EvaluatePlan {
  experiment::ExperimentSpec spec;
  std::vector<std::string> order, plain;  // with and without the adaptive attack
  std::vector<int> images, mine;
  int shard_k = 1, shard_n = 1;
};

EvaluatePlan PlanEvaluate(const EvaluateArgs& a) {
  if (a.out_dir.empty()) throw std::invalid_argument("-o/--out (the output folder) is required");
  if (fs::exists(a.out_dir) && !fs::is_directory(a.out_dir))
    throw std::invalid_argument("-o/--out " + a.out_dir + ": is a file, not a folder");
  if (a.targeted || a.spec.target)
    throw std::invalid_argument(
        "advbo evaluate measures untargeted robust accuracy; --targeted and --target do not "
        "apply");
  EvaluatePlan p;
  std::tie(p.shard_k, p.shard_n) = ParseShard(a.shard);
  EvaluateArgs args = a;
  args.spec.untargeted = true;
  // Robustness is reported at the field's standard radii unless --eps says otherwise.
  if (!args.spec.eps && args.spec.data.empty())
    args.spec.eps = args.spec.norm == "l2" ? (args.spec.dataset == "cifar10" ? 0.5 : 2.0)
                                           : (args.spec.dataset == "cifar10" ? 8.0 / 255 : 0.3);
  // The images looked at: --indices, else the first -n of the data (clean errors count as
  // not robust, so they are part of the denominator); of the user's data at most all of it
  // (default: all of an image folder or file).
  p.images = args.spec.indices;
  if (p.images.empty()) {
    int n = args.spec.num_images.value_or(10);
    if (!args.spec.data.empty()) {
      const data::ImageSet all =
          experiment::LoadImages(args.spec.dataset, args.spec.data, args.spec.format);
      n = std::min<int>(args.spec.num_images.value_or(experiment::DefaultNumImages(all, true)),
                        static_cast<int>(all.size()));
    }
    for (int i = 0; i < n; ++i) p.images.push_back(i);
  }
  for (size_t k = 0; k < p.images.size(); ++k)
    if (static_cast<int>(k % p.shard_n) == p.shard_k - 1) p.mine.push_back(p.images[k]);
  if (p.mine.empty()) throw std::invalid_argument("shard " + a.shard + " has no image");
  args.spec.indices = p.images;
  p.plain = experiment::SplitAttackList(
      a.ensemble.empty() ? DefaultEnsemble(args.spec.norm, args.spec.feedback) : a.ensemble);
  p.order = p.plain;
  p.spec = SpecOf(args, p.order);
  experiment::Validate(p.spec);
  // The defense's adaptive attack joins the ensemble last (for a deterministic defense it
  // is the plain attack itself, already there).
  const std::string adaptive =
      defenses::IsGameDefense(p.spec.defense)
          ? "eot:k=10/" + p.order.front()
          : defenses::ParseDefense(p.spec.defense).AdaptiveAttack(p.order.front());
  if (!a.no_adaptive && std::find(p.order.begin(), p.order.end(), adaptive) == p.order.end())
    p.order.push_back(adaptive);
  p.spec.attacks = p.order;
  experiment::Validate(p.spec);
  return p;
}

// The records already there: this shard's file and, for an unsharded run over a folder of
// shards, every shard's (they count as done). Throws when one was made with other settings.
std::vector<nlohmann::json> ResumedRecords(const experiment::RecordFile& file,
                                           const EvaluateArgs& a, const EvaluatePlan& p,
                                           const experiment::Experiment& ex,
                                           const fs::path& records) {
  std::vector<nlohmann::json> all = file.resumed();
  if (p.shard_n == 1)
    for (const auto& entry : fs::directory_iterator(a.out_dir)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("records.shard-", 0) == 0 && entry.path().extension() == ".jsonl")
        for (auto& r : experiment::ReadRecords(entry.path())) all.push_back(std::move(r));
    }
  for (const auto& r : all) {
    const std::string diff = experiment::SettingsMismatch(r, ex.Settings());
    if (!diff.empty())
      throw std::invalid_argument(records.string() + " holds records made with other settings: " +
                                  diff + "; use another -o/--out folder");
  }
  return all;
}

// images.jsonl: one verdict per image.
std::string VerdictLines(const std::vector<experiment::ImageVerdict>& verdicts) {
  std::string lines;
  for (const auto& v : verdicts)
    lines += nlohmann::json{{"image_index", v.image_index},
                            {"clean_correct", v.clean_correct},
                            {"robust", v.robust},
                            {"broken_by", v.broken_by.empty() ? nlohmann::json(nullptr)
                                                              : nlohmann::json(v.broken_by)},
                            {"queries", v.queries},
                            {"attacks_run", v.attacks_run}}
                 .dump() +
             "\n";
  return lines;
}

// The table a person reads (table.txt and stdout).
std::string EvaluateTable(const experiment::Experiment& ex, const EvaluatePlan& p,
                          const nlohmann::json& summary, size_t images, size_t plain_size) {
  const auto ci = summary["robust_accuracy_ci95"];
  std::string table;
  table += "model                      " + experiment::RecordPath(ex.model_path()) + "\n";
  table += "defense                    " + ex.defense().Spec() + "\n";
  table += std::string("threat model               ") +
           (ex.norm() == oracle::Norm::kL2 ? "L2" : "L_inf") + " eps " + Fmt(ex.epsilon(), 4) +
           (ex.feedback() == oracle::Feedback::kLabel ? ", top-1 label only" : "") + ", " +
           oracle::PixelSpaceName(ex.pixels()) + " queries, budget " +
           std::to_string(p.spec.budget) + " per attack, untargeted, seed " +
           std::to_string(p.spec.seed) + "\n";
  table += "images                     " + std::to_string(images) + "\n";
  table += "clean accuracy             " + Pct(summary["clean_accuracy"].get<double>()) + "\n";
  table += "robust accuracy            " + Pct(summary["robust_accuracy"].get<double>()) +
           " (95 % CI " + Pct(ci[0].get<double>()) + " - " + Pct(ci[1].get<double>()) + ")\n";
  if (p.order.size() != plain_size)
    table += "  plain ensemble only      " +
             Pct(summary["robust_accuracy_plain_ensemble"].get<double>()) + " (without " +
             p.order.back() + ")\n";
  for (const auto& name : p.order)
    table += "  broken first by " + name + ": " +
             std::to_string(summary["broken_by"][name].get<long>()) + "\n";
  table += "model queries per attacked image: mean " +
           Fmt(summary["queries_mean"].get<double>(), 1) + ", median " +
           Fmt(summary["queries_median"].get<double>(), 1) + "\n";
  return table;
}

// Verdicts, summary and table from every record of the run; writes images, summary and
// table files (with the shard's tag) and returns the table.
std::string WriteEvaluateOutputs(const EvaluateArgs& a, const EvaluatePlan& p,
                                 const experiment::Experiment& ex,
                                 const std::vector<nlohmann::json>& all, const std::string& tag) {
  const auto verdicts = experiment::WorstCaseVerdicts(p.mine, ex.selection().skipped, all, p.order);
  nlohmann::json summary = experiment::SummarizeVerdicts(verdicts, p.order);
  // The same records without the adaptive attack: the plain ensemble's number, beside.
  const std::vector<std::string>& plain = p.plain;
  const auto plain_summary = experiment::SummarizeVerdicts(
      experiment::WorstCaseVerdicts(p.mine, ex.selection().skipped, all, plain), plain);
  summary["robust_accuracy_plain_ensemble"] = plain_summary["robust_accuracy"];
  summary["ensemble"] = p.order;
  summary["plain_ensemble"] = plain;
  summary["settings"] = ex.Settings();
  summary["setup_queries"] = ex.setup_queries();
  summary["shard"] = a.shard;
  const fs::path dir(a.out_dir);
  experiment::WriteFileAtomic(dir / ("images" + tag + ".jsonl"), VerdictLines(verdicts));
  experiment::WriteFileAtomic(dir / ("summary" + tag + ".json"), summary.dump(1) + "\n");
  const std::string table = EvaluateTable(ex, p, summary, verdicts.size(), plain.size());
  experiment::WriteFileAtomic(dir / ("table" + tag + ".txt"), table);
  return table;
}

int RunEvaluate(const EvaluateArgs& a) {
  const EvaluatePlan p = PlanEvaluate(a);
  const experiment::Experiment ex(p.spec);
  if (!ex.pixels_note().empty())
    std::fprintf(stderr, "advbo evaluate: note: %s\n", ex.pixels_note().c_str());
  if (!a.quiet) PrintDataNotes("advbo evaluate", ex);
  experiment::CreatedFolders folders;
  folders.Create(a.out_dir);
  const std::string tag = ShardTag(p.shard_k, p.shard_n);
  const fs::path records = fs::path(a.out_dir) / ("records" + tag + ".jsonl");
  experiment::RecordFile file(records, /*staged=*/false);
  std::vector<nlohmann::json> all = ResumedRecords(file, a, p, ex, records);
  const std::set<int> in_shard(p.mine.begin(), p.mine.end());
  long attacked = 0;  // correctly classified images of this shard
  for (const auto& inst : ex.instances()) attacked += in_shard.count(inst.index);
  // Finished attack runs (resumed or from other shards) and whether each broke its image.
  std::map<experiment::RecordKey, bool> done;
  for (const auto& r : all) done[experiment::KeyOf(r)] = experiment::RecordBreaksImage(r);
  if (!a.quiet) {
    std::string chain;
    for (const auto& o : p.order) chain += (chain.empty() ? "" : " > ") + o;
    std::fprintf(stderr,
                 "advbo evaluate: %zu images (%ld correctly classified), ensemble %s, budget %ld "
                 "per attack, eps %.4g, shard %d/%d\n",
                 p.mine.size(), attacked, chain.c_str(), p.spec.budget, ex.epsilon(), p.shard_k,
                 p.shard_n);
  }
  const InterruptHint hint("\nadvbo evaluate: interrupted; finished attacks are kept in " +
                           records.string() + ": run the same command again to resume\n");
  ProgressBar bar(attacked, !a.quiet);
  experiment::EnsembleHooks hooks;
  hooks.on_record = [&](const nlohmann::json& r) {
    file.Append(r);
    all.push_back(r);
  };
  hooks.progress = [&](long finished, const std::string& status, bool image_finished) {
    bar.Update(finished, status, image_finished);
  };
  experiment::RunEnsemble(ex, in_shard, done, hooks);
  bar.Finish();
  file.Commit();
  const std::string table = WriteEvaluateOutputs(a, p, ex, all, tag);
  folders.Keep();
  std::printf("\n%s\nrecords: %s; images, summary and table in %s\n", table.c_str(),
              records.c_str(), a.out_dir.c_str());
  return 0;
}

}  // namespace

std::function<int()> RegisterEvaluateCommand(CLI::App& app) {
  auto a = std::make_shared<EvaluateArgs>();
  a->spec.budget = 5000;
  CLI::App* cmd = app.add_subcommand(
      "evaluate",
      "Worst-case robust accuracy of a (defended) model over an ensemble of black-box attacks\n"
      "(AutoAttack's protocol, Croce & Hein 2020): for each of the first -n images (or\n"
      "--indices), the attacks run in order, each with the full --budget, and stop at the\n"
      "first whose saved 8-bit image is adversarial. Untargeted; eps defaults to 8/255 on\n"
      "CIFAR-10 and 0.3 on MNIST. The defense's adaptive attack (eot:..., aaa-adaptive:...)\n"
      "joins the ensemble last, and the plain ensemble's number is reported beside. Writes\n"
      "records.jsonl (one line per attack run; an interrupted run resumes), images.jsonl,\n"
      "summary.json and table.txt into -o/--out; --shard k/n takes every n-th image, and the\n"
      "same command without --shard on that folder combines the shards (no new query).");
  cmd->add_option("--ensemble", a->ensemble,
                  "comma list of attack specs, cheapest first (as --attacks of advbo bench); "
                  "default by threat model: square,parsimonious,bos2 | simba-dct,square-l2 "
                  "(--norm l2) | rays,bo-hl,hsja (--feedback label) | hsja,sign-opt,geoda "
                  "(--feedback label --norm l2)");
  cmd->add_flag("--no-adaptive", a->no_adaptive,
                "do not add the defense's adaptive attack to the ensemble");
  AddExperimentOptions(cmd, a.get());
  cmd->get_option("--budget")->default_val(5000);
  // Always untargeted: the attack-goal options are refused with a clear error, and --help
  // says so.
  cmd->get_option("--targeted")->description("not for evaluate (always untargeted): refused");
  cmd->get_option("--target")->description("not for evaluate (always untargeted): refused");
  cmd->get_option("--untargeted")->description("the default here (evaluate is always untargeted)");
  cmd->get_option("--eps")->description(
      "radius in pixel units: L_inf in (0,1] (default 8/255 CIFAR-10, 0.3 MNIST: the field's "
      "standard radii); with --norm l2 an L2 radius (default 0.5 CIFAR-10, 2 MNIST)");
  cmd->add_option("--shard", a->shard, "evaluate shard k of n (every n-th image from the k-th)")
      ->default_val("1/1");
  cmd->add_option("-o,--out", a->out_dir, "output folder (required)");
  cmd->add_flag("-q,--quiet", a->quiet, "no progress bar");
  return [cmd, a]() { return cmd->parsed() ? RunEvaluate(*a) : 0; };
}

}  // namespace advbo::cli
