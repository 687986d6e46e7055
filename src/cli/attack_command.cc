// `advbo attack`: runs a black-box attack (BOS^2) on images of a dataset through a
// TorchScript classifier, writes one JSONL record per attack instance and prints a
// summary table.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "attacks/attack.h"
#include "attacks/bos2/bos2_attack.h"
#include "attacks/registry.h"
#include "cli/commands.h"
#include "cli/experiment_options.h"
#include "cli/format.h"
#include "cli/interrupt_hint.h"
#include "cli/progress.h"
#include "cli/save_images.h"
#include "cli/validators.h"
#include "data/datasets.h"
#include "experiment/records.h"
#include "experiment/runner.h"
#include "experiment/summary.h"

namespace advbo::cli {
namespace fs = std::filesystem;
namespace {

struct AttackArgs : ExperimentArgs {
  std::string attack = "bos2";
  bool no_stopping = false, quiet = false, verbose = false;
  int candidates = 0;
  std::string out, save_images, beta, kernel;  // empty = the attack's own setting
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
    throw std::invalid_argument(
        "--kernel, --beta, --candidates and --no-stopping apply to bos2 only");
  return a.attack + (a.attack.find(':') == std::string::npos ? ":" : ",") + extra;
}

void PrintBanner(const AttackArgs& a, const experiment::Experiment& ex) {
  const auto& sel = ex.selection();
  std::fprintf(stderr,
               "advbo attack: %s on %s (%zu images), model %s (%s), %s, %s queries, "
               "budget %ld, seed %llu\n",
               ex.spec().attacks[0].c_str(), ex.dataset_name().c_str(), ex.images().size(),
               ex.model_path().c_str(), ex.model().output_format().c_str(),
               ex.DescribeRadius().c_str(), oracle::PixelSpaceName(ex.pixels()), a.spec.budget,
               static_cast<unsigned long long>(a.spec.seed));
  PrintDataNotes("  advbo attack", ex);
  std::fprintf(stderr, "  attacking %zu correctly classified images (%zu instances)",
               sel.chosen.size(), sel.instances.size());
  if (!sel.skipped.empty()) {
    std::fprintf(stderr, "; skipped %zu misclassified: ", sel.skipped.size());
    for (size_t k = 0; k < sel.skipped.size(); ++k)
      std::fprintf(stderr, "%s%d", k ? "," : "", sel.skipped[k]);
  }
  std::fprintf(stderr, "\n");
}

// Where the summary of records file `records` goes: "run.jsonl" -> "run.summary.json" (any
// other name gets ".summary.json" appended).
fs::path SummaryPathOf(const std::string& records) {
  fs::path p(records);
  if (p.extension() == ".jsonl") return p.replace_extension(".summary.json");
  return fs::path(records + ".summary.json");
}

// The summary of the run's records (resumed ones included; experiment::SummarizeRecords, the
// one summary): printed as a table and, with -o FILE, written beside the records as
// FILE's stem + ".summary.json" with the run's settings and threat model.
void PrintSummary(const AttackArgs& a, const experiment::Experiment& ex,
                  const std::vector<nlohmann::json>& records) {
  const nlohmann::json s = experiment::SummarizeRecords(records);
  std::printf("\n%-26s %s\n", "attack", a.attack.c_str());
  std::printf("%-26s %s (%s, %s queries, budget %ld, %s, seed %llu)\n", "data",
              ex.dataset_name().c_str(), ex.DescribeRadius().c_str(),
              oracle::PixelSpaceName(ex.pixels()), a.spec.budget,
              a.spec.untargeted ? "untargeted" : (a.spec.target ? "single target" : "all targets"),
              static_cast<unsigned long long>(a.spec.seed));
  if (!ex.defense().empty())
    std::printf("%-26s %s (clean accuracy %s %% defended, %s %% undefended, first %d images)\n",
                "defense", ex.defense().Spec().c_str(),
                Fmt(100.0 * ex.defended_accuracy(), 2).c_str(),
                Fmt(100.0 * ex.clean_accuracy(), 2).c_str(),
                static_cast<int>(std::min<size_t>(ex.images().size(), a.spec.clean_images)));
  const long successes = s.at("successes").get<long>();
  std::printf("%-26s %zu\n", "instances", records.size());
  if (s.at("asr").is_null())
    std::printf("%-26s %s\n", "ASR", s.value("asr_note", std::string("not measured")).c_str());
  else if (s.contains("distance_at"))  // min-distance: a success is a run that ended within eps
    std::printf("%-26s %s %% (%ld/%zu ended within eps %s)\n", "ASR",
                Fmt(s.at("asr").get<double>(), 1).c_str(), successes, records.size(),
                experiment::FormatNumber(ex.epsilon()).c_str());
  else
    std::printf("%-26s %s %% (%ld/%zu)\n", "ASR", Fmt(s.at("asr").get<double>(), 1).c_str(),
                successes, records.size());
  if (!s.at("asr_8bit").is_null())
    std::printf("%-26s %s %% (%ld/%zu; the saved 8-bit image re-queried)\n", "8-bit ASR",
                Fmt(s.at("asr_8bit").get<double>(), 1).c_str(), s.at("successes_8bit").get<long>(),
                records.size());
  std::printf(
      "%-26s %s / %s / %s\n", "queries max/mean/median", Fmt(NumberOr(s, "max_queries"), 0).c_str(),
      Fmt(NumberOr(s, "mean_queries"), 1).c_str(), Fmt(NumberOr(s, "median_queries"), 1).c_str());
  std::printf("%-26s %s\n", "mean queries (fail=budget)",
              Fmt(s.at("mean_queries_fail_at_budget").get<double>(), 1).c_str());
  const double spi = s.at("seconds_per_instance").get<double>();
  const double model = spi * s.at("model_fraction").get<double>();
  const double wait = spi * s.at("wait_fraction").get<double>();
  std::printf(
      "%-26s %s s (model %s s = %s %%, waiting for lockstep rounds %s s, the attack's own "
      "work %s s = %s x the model's)\n",
      "seconds per instance", Fmt(spi, 2).c_str(), Fmt(model, 2).c_str(),
      Fmt(spi > 0 ? 100.0 * model / spi : NAN, 1).c_str(), Fmt(wait, 2).c_str(),
      Fmt(spi - model - wait, 2).c_str(), Fmt(NumberOr(s, "bo_over_model"), 2).c_str());
  if (s.contains("perturbation_loops"))
    std::printf("%-26s %ld (%ld ended by Bayesian optimal stopping)\n", "perturbation loops",
                s.at("perturbation_loops").get<long>(), s.at("loops_stopped_early").get<long>());
  if (s.contains("bad_query_share"))
    std::printf("%-26s %s per instance = %s %% of the queries (Blacklight, flag mode)\n",
                "bad queries", Fmt(s.at("bad_queries_mean").get<double>(), 1).c_str(),
                Fmt(100.0 * s.at("bad_query_share").get<double>(), 1).c_str());
  if (s.contains("distance_at")) {
    // The min-distance goal: the closest adversarial query at each checkpoint.
    const char* norm = ex.threat_model().norm == oracle::Norm::kL2 ? "L2" : "L_inf";
    const nlohmann::json& at = s.at("distance_at");
    std::vector<std::string> keys;
    for (const auto& [q, d] : at.items()) keys.push_back(q);
    std::sort(keys.begin(), keys.end(), [](const std::string& x, const std::string& y) {
      return std::stol(x) < std::stol(y);
    });
    for (const std::string& q : keys)
      std::printf("%-26s median %s, mean %s (%ld/%zu found)\n",
                  (std::string(norm) + " dist. at " + q + " q").c_str(),
                  Fmt(NumberOr(at[q], "median"), 4).c_str(),
                  Fmt(NumberOr(at[q], "mean"), 4).c_str(), at[q].at("found").get<long>(),
                  records.size());
  }
  if (a.out.empty()) return;
  std::printf("%-26s %s\n", "records", a.out.c_str());
  nlohmann::json out = {{"attack", a.attack},
                        {"settings", ex.Settings()},
                        {"threat_model", ex.threat_model().ToJson()}};
  out.update(s);
  const fs::path path = SummaryPathOf(a.out);
  experiment::WriteFileAtomic(path, out.dump(2) + "\n");
  std::printf("%-26s %s\n", "summary", path.c_str());
}

// The records of an interrupted run in `file`, by key; throws std::invalid_argument when
// they were made with other settings than `ex`'s.
std::map<experiment::RecordKey, nlohmann::json> ResumableRecords(const experiment::RecordFile& file,
                                                                 const experiment::Experiment& ex,
                                                                 bool quiet) {
  std::map<experiment::RecordKey, nlohmann::json> resumed;
  const nlohmann::json settings = ex.Settings();
  std::set<experiment::RecordKey> planned;
  for (const auto& inst : ex.instances())
    planned.insert({ex.attack(0).name(), inst.index, inst.target});
  for (const auto& r : file.resumed()) {
    const std::string diff = experiment::SettingsMismatch(r, settings);
    if (!diff.empty())
      throw std::invalid_argument(file.writing().string() +
                                  " holds records of an interrupted run with other settings (" +
                                  diff + "); delete it or change -o");
    const experiment::RecordKey key = experiment::KeyOf(r);
    if (!planned.count(key))
      throw std::invalid_argument(file.writing().string() + " holds a record (" + std::get<0>(key) +
                                  ", image " + std::to_string(std::get<1>(key)) +
                                  ") outside this run's instances; delete it or change -o");
    resumed[key] = r;
  }
  if (!quiet && !resumed.empty())
    std::fprintf(stderr, "  resuming %s: %zu instances already done\n", file.writing().c_str(),
                 resumed.size());
  return resumed;
}

// --verbose: one line per instance with its outcome and the latent dimensions (BOS^2).
void PrintInstance(const experiment::Instance& inst, const attacks::AttackResult& r) {
  std::string dims;
  if (r.details.contains("loops"))
    for (const auto& l : r.details["loops"])
      dims += std::to_string(l["latent_dim"].get<int>()) +
              (l["stopped_early"].get<bool>() ? "(stop)" : "") + " ";
  std::fprintf(stderr, "\n  image %d %d->%s: %s after %ld queries, y=%.3f, dims %s\n", inst.index,
               inst.label, inst.target >= 0 ? std::to_string(inst.target).c_str() : "any",
               r.success ? "SUCCESS" : "failed", r.queries, r.best_objective, dims.c_str());
}

// The -o record file: FILE.partial, renamed to FILE when the run completes; an interrupted
// run leaves FILE.partial, which the same command resumes. A finished record file is replaced
// only by a run with the same settings (which reproduces it); other settings would silently
// destroy results, so they are refused.
std::unique_ptr<experiment::RecordFile> OpenRecords(const AttackArgs& a,
                                                    const experiment::Experiment& ex) {
  if (fs::is_regular_file(a.out)) {
    const nlohmann::json settings = ex.Settings();
    for (const auto& r : experiment::ReadRecords(a.out))
      if (const std::string diff = experiment::SettingsMismatch(r, settings); !diff.empty())
        throw std::invalid_argument(a.out + " holds a finished run with other settings (" + diff +
                                    "); choose another -o, or delete the file to replace it");
  }
  return std::make_unique<experiment::RecordFile>(a.out, /*staged=*/true);
}

void PrintSavedImages(const AttackArgs& a, long saved, const std::vector<std::string>& lost) {
  std::printf("%-26s %ld verified 8-bit adversarial images in %s\n", "saved images", saved,
              a.save_images.c_str());
  if (lost.empty()) return;
  std::string list;
  for (const auto& l : lost) list += (list.empty() ? "" : ", ") + l;
  std::printf("%-26s %zu successes not saved, their 8-bit image is not adversarial: %s\n", "",
              lost.size(), list.c_str());
}

// Creates the folders of -o and --save-images (registered in `folders`, removed again if the
// run fails); refuses a folder as -o and a file as --save-images.
void PrepareOutputs(const AttackArgs& a, experiment::CreatedFolders* folders) {
  if (!a.out.empty()) {
    if (fs::is_directory(a.out))
      throw std::invalid_argument("-o " + a.out + ": is a folder; give a .jsonl file name");
    folders->Create(fs::path(a.out).parent_path());
  }
  if (!a.save_images.empty()) {
    if (fs::exists(a.save_images) && !fs::is_directory(a.save_images))
      throw std::invalid_argument("--save-images " + a.save_images + ": is a file, not a folder");
    folders->Create(a.save_images);
  }
}

int RunAttack(const AttackArgs& a) {
  // ---- Validate everything before any work, so bad input loses nothing.
  const experiment::ExperimentSpec spec = SpecOf(a, {AttackSpec(a)});
  experiment::CreatedFolders folders;  // removed again if the run fails before writing
  PrepareOutputs(a, &folders);
  const experiment::Experiment ex(spec);
  if (!a.quiet) PrintBanner(a, ex);
  PrintQueryNotes("advbo attack", ex);  // shown even with -q

  // ---- Output (OpenRecords).
  std::unique_ptr<experiment::RecordFile> file;
  std::map<experiment::RecordKey, nlohmann::json> resumed;
  std::optional<InterruptHint> hint;
  if (!a.out.empty()) {
    file = OpenRecords(a, ex);
    resumed = ResumableRecords(*file, ex, a.quiet);
    hint.emplace("\nadvbo attack: interrupted; finished instances are kept in " +
                 file->writing().string() + ": run the same command again to resume\n");
  }
  const auto& instances = ex.instances();
  ProgressBar bar(static_cast<long>(instances.size()), !a.quiet);
  std::vector<nlohmann::json> records;
  long successes = 0, saved = 0;
  std::vector<std::string> lost;  // successes whose 8-bit image is no longer adversarial
  std::mutex mu;      // the bar and the counts: lanes report progress from their threads
  long finished = 0;  // instances whose outcome is in `successes`
  ex.RunJobs(instances.size(), [&](size_t k) -> oracle::Lockstep::Commit {
    const experiment::Instance& inst = instances[k];
    auto status = [&, k](long q, double best) {  // caller holds mu
      char b[160];
      std::snprintf(b, sizeof(b), "ASR %s%% | inst %zu q=%ld best y=%.3f",
                    finished ? Fmt(100.0 * successes / finished, 1).c_str() : "-", k + 1, q, best);
      return std::string(b);
    };
    const auto it = resumed.find({ex.attack(0).name(), inst.index, inst.target});
    if (it != resumed.end())
      return [&, k, record = it->second] {
        records.push_back(record);
        std::lock_guard<std::mutex> lock(mu);
        successes += record.at("success").get<bool>();
        bar.Update(static_cast<long>(k) + 1, "resumed", true);
        ++finished;
      };
    auto job = std::make_shared<experiment::JobResult>(ex.Run(k, 0, [&](long q, double best) {
      std::lock_guard<std::mutex> lock(mu);
      bar.Update(finished, status(q, best), false);
    }));
    return [&, k, job, status] {  // in instance order
      const experiment::Instance& inst = instances[k];
      const attacks::AttackResult& r = job->result;
      records.push_back(job->record);
      if (file) file->Append(job->record);
      if (a.verbose) PrintInstance(inst, r);
      if (!a.save_images.empty()) {
        if (SaveInstanceImages(a.save_images, inst, *job, ex.images(), ex.epsilon()))
          ++saved;
        else if (r.success)
          lost.push_back(std::to_string(inst.index) + "->" +
                         (inst.target >= 0 ? std::to_string(inst.target) : "any"));
      }
      std::lock_guard<std::mutex> lock(mu);
      successes += r.success;
      ++finished;
      bar.Update(static_cast<long>(k) + 1, status(r.queries, r.best_objective), true);
    };
  });
  bar.Finish();
  if (file) file->Commit();
  folders.Keep();
  PrintSummary(a, ex, records);
  PrintModelNotes("advbo attack", ex);
  if (!a.quiet) PrintLockstepStats("advbo attack", ex);
  if (!a.save_images.empty()) PrintSavedImages(a, saved, lost);
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
  AddExperimentOptions(cmd, args.get());
  cmd->add_option("--attack", args->attack, "attack: " + attacks::AttackHelp())
      ->default_val("bos2");
  cmd->add_option("--beta", args->beta,
                  "BOS^2 Add-GP-UCB exploration weight: kandasamy2015 | srinivas2010 | constant:V\n"
                  "(default: the bos2 configuration's, kandasamy2015; = bos2:beta=...)");
  cmd->add_option("--kernel", args->kernel,
                  "BOS^2 kernel of the additive perturbation GP: se | matern52 (= bos2:kernel=...)")
      ->check(CLI::IsMember({"se", "matern52"}));
  cmd->add_option("--candidates", args->candidates,
                  "BOS^2 random candidates per additive group with fresh candidates, pool=0 "
                  "(= bos2:candidates=N)")
      ->check(IntAtLeast(1));
  cmd->add_flag("--no-stopping", args->no_stopping,
                "BOS^2 without Bayesian optimal stopping (ablation; = bos2:stopping=0)");
  cmd->add_option("--out,-o", args->out, "JSONL results file (one record per instance)");
  cmd->add_option("--save-images", args->save_images,
                  "folder for clean / adversarial / amplified-perturbation PNGs (and a hard-label "
                  "run's closest adversarial query, closest_*.png); adversarial "
                  "images are rounded onto the 8-bit grid inside the eps-ball and re-queried, and "
                  "written only when still adversarial");
  cmd->add_flag("-q,--quiet", args->quiet, "no progress bar or banner");
  cmd->add_flag("-v,--verbose", args->verbose, "one line per instance with the latent dimensions");
  return [cmd, args]() { return cmd->parsed() ? RunAttack(*args) : 0; };
}

}  // namespace advbo::cli
