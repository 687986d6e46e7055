// `advbo evaluate`: worst-case robust accuracy of a (defended) model over an ensemble of
// black-box attacks beside a white-box reference. The evaluation itself (plan, run, verdict,
// merge) is experiment/evaluation.h's; this file parses the options, draws the progress bar
// and prints.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attacks/registry.h"
#include "cli/commands.h"
#include "cli/experiment_options.h"
#include "cli/interrupt_hint.h"
#include "cli/option_table.h"
#include "cli/parse.h"
#include "cli/plot.h"
#include "cli/progress.h"
#include "cli/validators.h"
#include "experiment/evaluation.h"
#include "experiment/records.h"
#include "experiment/reference.h"
#include "experiment/runner.h"

namespace advbo::cli {
namespace {

struct EvaluateArgs : ExperimentArgs {
  experiment::EvaluationOptions evaluation;  ///< every option that is not an ExperimentArgs one
  std::string shard = "1/1";
  bool quiet = false;
};

// curves.png from the result's curve (and the reference's flat line).
void WriteCurvesPng(const experiment::EvaluationResult& r) {
  if (r.curves_png.empty() || r.curve.empty()) return;
  std::vector<PlotSeries> series = {{"black-box ensemble", r.curve}};
  const auto& ref = r.summary.value("reference_robust_accuracy", nlohmann::json());
  if (ref.is_number())
    series.push_back({"white-box reference (APGD)",
                      std::vector<double>(r.curve.size(), 100.0 * ref.get<double>())});
  WriteLinePlot(r.curves_png, series, r.curve_step,
                r.curve_step * static_cast<double>(r.curve.size() - 1), 0.0, 100.0,
                "model queries per image", "robust accuracy (%)");
}

int RunEvaluate(const EvaluateArgs& a) {
  if (a.targeted)
    throw std::invalid_argument(
        "advbo evaluate measures untargeted robust accuracy; --targeted and --target do not "
        "apply");
  experiment::EvaluationOptions o = a.evaluation;
  o.spec = SpecOf(a, {});
  std::tie(o.shard_k, o.shard_n) = ParseShard(a.shard);
  const std::string records =
      o.out_dir + "/records" + experiment::ShardTag(o.shard_k, o.shard_n) + ".jsonl";
  const InterruptHint hint("\nadvbo evaluate: interrupted; finished attacks are kept in " +
                           records + ": run the same command again to resume\n");
  std::optional<ProgressBar> bar;
  const experiment::Experiment* ex = nullptr;
  experiment::EvaluationHooks hooks;
  hooks.on_experiment = [&](const experiment::Experiment& e) {
    ex = &e;
    PrintQueryNotes("advbo evaluate", e);  // shown even with -q
    if (!a.quiet) PrintDataNotes("advbo evaluate", e);
  };
  hooks.note = [&](const std::string& line, bool warning) {
    if (!a.quiet || warning) std::fprintf(stderr, "advbo evaluate: %s\n", line.c_str());
  };
  hooks.begin = [&](const std::string&, long total) { bar.emplace(total, !a.quiet); };
  hooks.progress = [&](long finished, const std::string& status, bool image_finished) {
    if (bar) bar->Update(finished, status, image_finished);
  };
  hooks.end = [&] {
    if (bar) bar->Finish();
    bar.reset();
  };
  const experiment::EvaluationResult r = experiment::Evaluate(o, hooks);
  if (!a.quiet && ex && !o.reference_only) PrintLockstepStats("advbo evaluate", *ex);
  WriteCurvesPng(r);
  std::printf("\n%s\nrecords: %s; images, summary and table in %s\n", r.table.c_str(),
              r.records.c_str(), o.out_dir.c_str());
  if (r.status == 3)
    std::fprintf(stderr,
                 "advbo evaluate: %ld images were not evaluated (an attack's record is "
                 "missing); run the same command again to attack them\n",
                 r.summary["not_evaluated"].get<long>());
  return r.status;
}

int RunEvaluateMerge(const std::vector<std::string>& inputs, const std::string& out_dir) {
  const experiment::EvaluationResult r = experiment::MergeEvaluations(inputs, out_dir);
  WriteCurvesPng(r);
  std::printf("%s\nmerged %zu folders (%zu images, %ld records) into %s\n", r.table.c_str(),
              inputs.size(), r.summary.at("evaluation_images").size(), r.record_count,
              out_dir.c_str());
  if (r.status == 3)
    std::fprintf(stderr,
                 "advbo evaluate merge: %ld images were not evaluated (no folder holds their "
                 "verdict or an attack's record): they are not counted robust\n",
                 r.summary.at("not_evaluated").get<long>());
  return r.status;
}

}  // namespace

// The options of the command, in --help order (cli/option_table.h).
const OptionRow<EvaluateArgs> kEvaluateOptions[] = {
    Custom<EvaluateArgs>([](CLI::App* cmd, EvaluateArgs* a) {
      return cmd->add_option(
          "--ensemble", a->evaluation.ensemble,
          "comma list of attack specs, cheapest first (as --attacks of advbo bench); "
          "default by threat model: " +
              attacks::DefaultEnsemble(oracle::Norm::kLinf, oracle::Feedback::kScores) + " | " +
              attacks::DefaultEnsemble(oracle::Norm::kL2, oracle::Feedback::kScores) +
              " (--norm l2) | " +
              attacks::DefaultEnsemble(oracle::Norm::kLinf, oracle::Feedback::kLabel) +
              " (--feedback label) | " +
              attacks::DefaultEnsemble(oracle::Norm::kL2, oracle::Feedback::kLabel) +
              " (--feedback label --norm l2)");
    }),
    Flag("--no-adaptive", &EvaluateArgs::evaluation, &experiment::EvaluationOptions::no_adaptive,
         "do not add the defense's adaptive attack to the ensemble"),
    Value("--reference", &EvaluateArgs::evaluation, &experiment::EvaluationOptions::reference,
          std::string("white-box reference beside the ensemble, where it applies (a local "
                      "TorchScript model, no defense, L_inf): apgd (APGD-CE + APGD-T, Croce & "
                      "Hein 2020) | standard (APGD-CE + APGD-T + FAB-T: AutoAttack's standard "
                      "white-box attacks) | auto (") +
              experiment::kDefaultReference +
              ") | none. Writes reference.jsonl, reference_robust_accuracy and "
              "combined_robust_accuracy (robust only where both failed)",
          CLI::IsMember({"auto", "apgd", "standard", "none"}), "auto"),
    Value("--split", &EvaluateArgs::evaluation, &experiment::EvaluationOptions::split,
          "how --budget (per image, over the whole ensemble) is shared: one weight per "
          "ensemble attack in order (default equal); what an attack leaves unused "
          "passes on to the next"),
    Custom<EvaluateArgs>([](CLI::App* cmd, EvaluateArgs* a) {
      return cmd
          ->add_option(
              "--verify-draws", a->spec.verify_draws,
              "behind a randomised defense, re-query each saved image this many times (fresh "
              "draws of the defense's randomness); a break counts when most draws are "
              "adversarial")
          ->check(IntInRange(1, 1000))
          ->default_val(a->spec.verify_draws);
    }),
    Value("--save-images", &EvaluateArgs::evaluation, &experiment::EvaluationOptions::save_images,
          "folder for clean_<i>.png and adversarial_<i>.png of every image an attack "
          "broke (the saved 8-bit image, inside the ball, verified adversarial), and "
          "reference_<i>.png of every image the white-box reference broke"),
    Flag("--reference-only", &EvaluateArgs::evaluation,
         &experiment::EvaluationOptions::reference_only,
         "run only the white-box reference (no black-box attack)"),
    Custom<EvaluateArgs>([](CLI::App* cmd, EvaluateArgs* a) {
      return cmd
          ->add_option("--reference-steps", a->evaluation.apgd.iterations,
                       "APGD iterations per run (AutoAttack's standard: 100)")
          ->check(IntInRange(1, 100000))
          ->default_val(100);
    }),
    Custom<EvaluateArgs>([](CLI::App* cmd, EvaluateArgs* a) {
      return cmd
          ->add_option("--reference-restarts", a->evaluation.apgd.restarts,
                       "APGD-CE runs from random starts (AutoAttack's standard: 1)")
          ->check(IntInRange(1, 1000))
          ->default_val(1);
    }),
    Custom<EvaluateArgs>([](CLI::App* cmd, EvaluateArgs* a) {
      return cmd
          ->add_option("--reference-targets", a->evaluation.apgd.target_classes,
                       "APGD-T (and FAB-T) target classes, the top ones by clean logits "
                       "(standard: 9)")
          ->check(IntInRange(0, 1000))
          ->default_val(9);
    }),
};

// The options after the experiment's (cli/experiment_options.h): sharding and output.
const OptionRow<EvaluateArgs> kEvaluateOutputOptions[] = {
    Value("--shard", &EvaluateArgs::shard, "evaluate shard k of n (every n-th image from the k-th)",
          std::nullopt, "1/1"),
    Value("-o,--out", &EvaluateArgs::evaluation, &experiment::EvaluationOptions::out_dir,
          "output folder (required)"),
    Flag("-q,--quiet", &EvaluateArgs::quiet, "no progress bar"),
};

std::function<int()> RegisterEvaluateCommand(CLI::App& app) {
  auto a = std::make_shared<EvaluateArgs>();
  a->spec = experiment::EvaluationOptions::EvaluationSpec();
  CLI::App* cmd = app.add_subcommand(
      "evaluate",
      "Worst-case robust accuracy of a (defended) model over an ensemble of black-box attacks\n"
      "(AutoAttack's protocol, Croce & Hein 2020): for each of the first -n images (or\n"
      "--indices), the attacks run in order, sharing --budget queries per image (--split),\n"
      "and stop at the first whose saved 8-bit image is adversarial. Untargeted; eps defaults\n"
      "to 8/255 on CIFAR-10 and 0.3 on MNIST. Behind a defense with an adaptive attack\n"
      "(eot:..., aaa-adaptive:..., oars:...) every member is wrapped by it (never twice); a\n"
      "number no working adaptive attack challenged is marked an upper bound. Beside it, a\n"
      "white-box reference (APGD-CE + APGD-T, --reference) where it\n"
      "applies, and the combined worst case. Writes records.jsonl (one line per attack run; an\n"
      "interrupted run resumes), reference.jsonl, images.jsonl, summary.json and table.txt\n"
      "into -o/--out; --shard k/n takes every n-th image, and the same command without\n"
      "--shard on that folder combines the shards (no new query); `advbo evaluate merge`\n"
      "combines folders. An image an attack was not run on is 'not evaluated' (exit 3).");

  AddOptionTable(cmd, a.get(), kEvaluateOptions);
  AddExperimentOptions(cmd, a.get());
  cmd->get_option("--budget")
      ->description(
          "model queries per image over the whole ensemble, shared as --split "
          "says; records and images.jsonl show each image's total");
  // Always untargeted: the attack-goal options are refused with a clear error, and --help
  // says so.
  cmd->get_option("--targeted")->description("not for evaluate (always untargeted): refused");
  cmd->get_option("--target")->description("not for evaluate (always untargeted): refused");
  cmd->get_option("--untargeted")->description("the default here (evaluate is always untargeted)");
  cmd->get_option("--num-images")
      ->description(
          "evaluate the first N test images, correctly classified or not (a clean error counts "
          "as not robust; default 10; with --data: all of it); at most the data's size");
  AddOptionTable(cmd, a.get(), kEvaluateOutputOptions);
  cmd->get_option("--eps")->description(
      "radius in pixel units: L_inf in (0,1] (default 8/255 CIFAR-10, 0.3 MNIST: the field's "
      "standard radii); with --norm l2 an L2 radius (default 0.5 CIFAR-10, 2 MNIST)");
  CLI::App* merge = cmd->add_subcommand(
      "merge",
      "Combine evaluate folders (shards run in separate folders or on separate machines) into\n"
      "one: records, reference, images, summary and table; no model query. An image whose\n"
      "attack records are missing in every folder is 'not evaluated' (exit status 3), never\n"
      "robust.");
  auto merge_inputs = std::make_shared<std::vector<std::string>>();
  auto merge_out = std::make_shared<std::string>();
  merge->add_option("inputs", *merge_inputs, "evaluate output folders")->required();
  merge->add_option("-o,--out", *merge_out, "output folder")->required();
  return [cmd, merge, a, merge_inputs, merge_out]() {
    if (merge->parsed()) return RunEvaluateMerge(*merge_inputs, *merge_out);
    return cmd->parsed() ? RunEvaluate(*a) : 0;
  };
}

}  // namespace advbo::cli
