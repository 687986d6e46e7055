// `advbo bench`: several attacks on the same correctly classified images and targets,
// through the same oracle, budget and threat model, summarised as the BOS^2 paper's tables
// (Kharkovskii 2020 thesis Tables 5.1-5.4): ASR, max / mean / median queries over successes,
// mean queries with failures counted at the budget, wall seconds and the model/BO split.
// Work can be split into shards (--shard k/n), resumed after an interruption, and merged
// (`advbo bench merge`).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
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
#include "attacks/registry.h"
#include "cli/commands.h"
#include "cli/experiment_options.h"
#include "cli/format.h"
#include "cli/interrupt_hint.h"
#include "cli/parse.h"
#include "cli/plot.h"
#include "cli/progress.h"
#include "cli/save_images.h"
#include "cli/validators.h"
#include "experiment/records.h"
#include "experiment/runner.h"
#include "experiment/summary.h"

namespace advbo::cli {
namespace fs = std::filesystem;
namespace {

struct BenchArgs : ExperimentArgs {
  std::string out_dir;
  std::string save_images;  ///< --save-images folder ("" = none)
  std::string attacks = "bos2,bos2-nostop,bayesopt,genattack,zoo,autozoom,square,random";
  std::string shard = "1/1";
  bool quiet = false;
  std::vector<std::string> merge_inputs;
};

// Attacks in the registry's order, others alphabetically after.
std::vector<std::string> OrderAttacks(std::set<std::string> names) {
  std::vector<std::string> out;
  for (const auto& n : attacks::AttackNames())
    if (names.erase(n)) out.push_back(n);
  out.insert(out.end(), names.begin(), names.end());
  return out;
}

// curves.csv and curves.png, one column / line per attack: ASR (%) against queries, or under
// the min-distance goal (`distance_norm` non-empty) the median distance of the closest
// adversarial query (empty in the CSV and drawn at the top while the median is +inf, and above
// the axis's end during the first 5 % of the budget).
void WriteCurves(const std::vector<std::string>& order,
                 const std::vector<std::vector<double>>& curves, long budget, const fs::path& dir,
                 const std::string& distance_norm) {
  const auto& atomic_write = experiment::WriteFileAtomic;
  const bool distance = !distance_norm.empty();
  std::ostringstream csv;
  csv << "queries";
  for (const auto& n : order) csv << "," << n;
  csv << "\n";
  double top = 0;
  for (long q = 1; q <= budget; ++q) {
    csv << q;
    for (const auto& c : curves) {
      csv << "," << (std::isfinite(c[q]) ? Fmt(c[q], distance ? 5 : 3) : "");
      // The distance axis ends at the largest median after the first 5 % of the budget: the
      // first queries' far starts would flatten the rest (they are drawn at the top).
      if (std::isfinite(c[q]) && q >= std::max<long>(1, budget / 20)) top = std::max(top, c[q]);
    }
    csv << "\n";
  }
  atomic_write(dir / "curves.csv", csv.str());
  std::vector<PlotSeries> series;
  for (size_t i = 0; i < curves.size(); ++i)
    series.push_back(
        {order[i], std::vector<double>(curves[i].begin(), curves[i].begin() + budget + 1)});
  const double x_max = static_cast<double>(std::max<long>(budget, 1));
  if (distance)
    WriteLinePlot(dir / "curves.png", series, 1.0, x_max, 0.0, top > 0 ? 1.05 * top : 1.0,
                  "queries", "median " + distance_norm + " distance");
  else
    WriteLinePlot(dir / "curves.png", series, 1.0, x_max, 0.0, 100.0, "queries",
                  "success rate (%)");
}

// The median over records of the closest adversarial distance within q queries, q =
// 0..budget (+inf while at least half the records have none), from their distance_trace.
std::vector<double> MedianDistanceCurve(const std::vector<const nlohmann::json*>& rs, long budget) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> within(rs.size(), std::vector<double>(budget + 1, inf));
  for (size_t i = 0; i < rs.size(); ++i) {
    if (!rs[i]->contains("distance_trace")) continue;
    for (const auto& p : rs[i]->at("distance_trace")) {
      const long q = p.at(0).get<long>();
      if (q <= budget) within[i][q] = std::min(within[i][q], p.at(1).get<double>());
    }
    for (long q = 1; q <= budget; ++q) within[i][q] = std::min(within[i][q], within[i][q - 1]);
  }
  std::vector<double> curve(budget + 1, inf), at(rs.size());
  for (long q = 0; q <= budget; ++q) {
    for (size_t i = 0; i < rs.size(); ++i) at[i] = within[i][q];
    if (!at.empty()) curve[q] = experiment::Median(at);
  }
  return curve;
}

// The min-distance block of table.txt: per attack the median (mean) distance of the closest
// adversarial query at each query checkpoint of its summary's distance_at.
std::string DistanceTable(const nlohmann::json& summary, const std::string& norm) {
  std::vector<std::string> keys;
  for (const auto& s : summary)
    if (s.contains("distance_at"))
      for (const auto& [k, v] : s.at("distance_at").items())
        if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  std::sort(keys.begin(), keys.end(),
            [](const std::string& a, const std::string& b) { return std::stol(a) < std::stol(b); });
  std::ostringstream t;
  t << "\nmedian (mean) " << norm << " distance of the closest adversarial query at\n";
  char cell[64];
  std::snprintf(cell, sizeof(cell), "%-12s", "queries");
  t << cell;
  for (const auto& k : keys) {
    std::snprintf(cell, sizeof(cell), " %16s", k.c_str());
    t << cell;
  }
  t << "\n";
  for (const auto& s : summary) {
    std::snprintf(cell, sizeof(cell), "%-12s", s.at("attack").get<std::string>().c_str());
    t << cell;
    for (const auto& k : keys) {
      const nlohmann::json d =
          s.value("distance_at", nlohmann::json::object()).value(k, nlohmann::json());
      const std::string text =
          d.is_object() ? Fmt(NumberOr(d, "median"), 3) + " (" + Fmt(NumberOr(d, "mean"), 3) + ")"
                        : "-";
      std::snprintf(cell, sizeof(cell), " %16s", text.c_str());
      t << cell;
    }
    t << "\n";
  }
  return t.str();
}

// One attack's row: its summary.json entry, its table.txt line and its success curve (ASR in
// % with at most q queries, q = 0..budget).
struct AttackRow {
  nlohmann::json summary;
  std::string line;
  std::vector<double> curve;
};

AttackRow SummarizeAttack(const std::string& name, const std::vector<const nlohmann::json*>& rs,
                          long budget, bool distance) {
  AttackRow row;
  row.summary = {{"attack", name}};
  row.summary.update(experiment::SummarizeRecords(rs));  // the one summary
  const nlohmann::json& s = row.summary;
  const double spi = s.at("seconds_per_instance").get<double>();
  char line[512];
  std::snprintf(
      line, sizeof(line), "%-12s %9zu %6s %6s %6s %8s %8s %12s %10s %8s %6s %8s %6s\n",
      name.c_str(), rs.size(), Fmt(NumberOr(s, "asr"), 1).c_str(),
      Fmt(NumberOr(s, "asr_8bit"), 1).c_str(), Fmt(NumberOr(s, "max_queries"), 0).c_str(),
      Fmt(NumberOr(s, "mean_queries"), 2).c_str(), Fmt(NumberOr(s, "median_queries"), 1).c_str(),
      Fmt(s.at("mean_queries_fail_at_budget").get<double>(), 1).c_str(), Fmt(spi, 2).c_str(),
      Fmt(spi > 0 ? 100.0 * s.at("model_fraction").get<double>() : NAN, 1).c_str(),
      Fmt(spi > 0 ? 100.0 * s.at("wait_fraction").get<double>() : NAN, 1).c_str(),
      Fmt(NumberOr(s, "bo_over_model"), 2).c_str(),
      Fmt(s.contains("bad_query_share") ? 100.0 * s.at("bad_query_share").get<double>() : NAN, 1)
          .c_str());
  row.line = line;
  if (distance) {
    row.curve = MedianDistanceCurve(rs, budget);
    return row;
  }
  // Success rate (%) with at most q queries, q = 0..budget.
  const double n = static_cast<double>(rs.size());
  row.curve.assign(budget + 1, 0.0);
  for (const auto* r : rs)
    if (r->at("success").get<bool>())
      row.curve[std::min<long>(budget, r->at("queries").get<long>())] += 100.0 / n;
  for (long q = 1; q <= budget; ++q) row.curve[q] += row.curve[q - 1];
  return row;
}

// Writes table.txt, summary.json, curves.csv, curves.png for the records into dir.
void WriteSummary(const std::vector<nlohmann::json>& records, const fs::path& dir, bool print) {
  std::map<std::string, std::vector<const nlohmann::json*>> by;
  // Curves run to the budget, but never past the last query any run used once that is
  // beyond 10^5 queries: a huge --budget with early successes must not write a curves.csv of
  // one line per unused query.
  long budget = 0, used = 0;
  bool distance = false;  // the min-distance goal
  std::string norm = "linf";
  for (const auto& r : records) {
    if (r.contains("distance_at")) {
      distance = true;
      norm = r.value("norm", "linf");
    }
    by[r.at("attack").get<std::string>()].push_back(&r);
    budget = std::max(budget, r.at("budget").get<long>());
    used = std::max(used, r.contains("queries_used") ? r.at("queries_used").get<long>()
                                                     : r.at("queries").get<long>());
  }
  budget = std::min(budget, std::max<long>(used, 100000));
  std::set<std::string> names;
  for (const auto& [k, v] : by) names.insert(k);
  const std::vector<std::string> order = OrderAttacks(names);
  nlohmann::json summary = nlohmann::json::array();
  std::ostringstream table;
  char line[512];
  std::snprintf(line, sizeof(line), "%-12s %9s %6s %6s %6s %8s %8s %12s %10s %8s %6s %8s %6s\n",
                "attack", "instances", "ASR%", "8bit%", "max", "mean", "median", "mean(fail=T)",
                "s/instance", "model%", "wait%", "BO/model", "bad%");
  table << line;
  std::vector<std::vector<double>> curves;
  for (const auto& name : order) {
    AttackRow row = SummarizeAttack(name, by[name], budget, distance);
    summary.push_back(std::move(row.summary));
    table << row.line;
    curves.push_back(std::move(row.curve));
  }
  fs::create_directories(dir);
  const std::string norm_name = norm == "l2" ? "L2" : "L_inf";
  if (distance) {
    const nlohmann::json& s0 = summary.front();
    table << (s0.contains("asr_note")
                  ? "ASR% / 8bit%: " + s0.at("asr_note").get<std::string>() + "\n"
                  : "ASR% / 8bit%: the runs whose closest adversarial query ended within eps " +
                        s0.value("epsilon", nlohmann::json()).dump() + "\n");
    table << DistanceTable(summary, norm_name);
  }
  const auto& atomic_write = experiment::WriteFileAtomic;
  atomic_write(dir / "table.txt", table.str());
  atomic_write(dir / "summary.json", summary.dump(2) + "\n");
  WriteCurves(order, curves, budget, dir, distance ? norm_name : "");
  if (print) std::printf("\n%s", table.str().c_str());
}

// Refuses records (resumed or merged) that were made with other settings than `settings`,
// or by an attack outside `attacks` (when given), naming the file and the difference.
void CheckRecords(const std::vector<nlohmann::json>& records, const nlohmann::json& settings,
                  const std::set<std::string>* attacks, const std::string& where) {
  for (const auto& r : records) {
    const std::string diff = experiment::SettingsMismatch(r, settings);
    if (!diff.empty())
      throw std::invalid_argument(where + " holds records made with other settings: " + diff +
                                  "; use another -o/--out folder");
    const std::string name = std::get<0>(experiment::KeyOf(r));
    if (attacks && !attacks->count(name))
      throw std::invalid_argument(
          where + " holds records of attack '" + name +
          "', which is not in --attacks; add it or use another -o/--out folder");
  }
}

// A bench job: attack `attack` on instance `instance` of the experiment.
struct Job {
  size_t instance, attack;
};

// Jobs = instances x attacks (attacks interleaved). Shard k/n takes job (i, j) when
// (i + j) mod n = k - 1: every attack's instances are spread evenly over the shards
// whatever the number of attacks (job id mod n would give all of one attack's jobs to
// one shard whenever n divides the attack count, e.g. every BO attack to shard 1 of 2).
std::vector<Job> ShardJobs(const experiment::Experiment& ex, int shard_k, int shard_n) {
  std::vector<Job> jobs;
  for (size_t i = 0; i < ex.instances().size(); ++i)
    for (size_t j = 0; j < ex.num_attacks(); ++j)
      if (static_cast<int>((i + j) % shard_n) == shard_k - 1) jobs.push_back({i, j});
  return jobs;
}

// The notes before a run: the query notes (even with -q), the data's, and the defense's clean
// accuracy.
void PrintBenchNotes(const BenchArgs& a, const experiment::Experiment& ex) {
  PrintQueryNotes("advbo bench", ex);
  if (!a.quiet) PrintDataNotes("advbo bench", ex);
  if (!ex.defense().empty() && !a.quiet)
    std::fprintf(stderr, "advbo bench: defense %s, clean accuracy %.2f %% (undefended %.2f %%)\n",
                 ex.defense().Spec().c_str(), 100.0 * ex.defended_accuracy(),
                 100.0 * ex.clean_accuracy());
}

// --save-images: one sub-folder per attack (the same instance's images of two attacks side
// by side), registered in `folders`; refuses a file.
void CreateImageFolders(const std::string& folder, const experiment::Experiment& ex,
                        experiment::CreatedFolders* folders) {
  if (fs::exists(folder) && !fs::is_directory(folder))
    throw std::invalid_argument("--save-images " + folder + ": is a file, not a folder");
  for (size_t j = 0; j < ex.num_attacks(); ++j)
    folders->Create(fs::path(folder) / FolderNameOf(ex.attack(j).name()));
}

int RunBench(const BenchArgs& a) {
  if (a.out_dir.empty()) throw std::invalid_argument("-o/--out (the output folder) is required");
  if (fs::exists(a.out_dir) && !fs::is_directory(a.out_dir))
    throw std::invalid_argument("-o/--out " + a.out_dir + ": is a file, not a folder");
  const auto [shard_k, shard_n] = ParseShard(a.shard);
  const experiment::ExperimentSpec spec = SpecOf(a, experiment::SplitAttackList(a.attacks));
  const experiment::Experiment ex(spec);
  PrintBenchNotes(a, ex);
  const std::vector<Job> jobs = ShardJobs(ex, shard_k, shard_n);
  experiment::CreatedFolders folders;  // removed again if the run fails before writing
  folders.Create(a.out_dir);
  if (!a.save_images.empty()) CreateImageFolders(a.save_images, ex, &folders);
  long saved = 0;
  const fs::path records =
      fs::path(a.out_dir) / ("records" + experiment::ShardTag(shard_k, shard_n) + ".jsonl");
  experiment::RecordFile file(records, /*staged=*/false);
  std::vector<nlohmann::json> all = file.resumed();
  const std::set<std::string> names(spec.attacks.begin(), spec.attacks.end());
  CheckRecords(all, ex.Settings(), &names, records.string());
  std::set<experiment::RecordKey> done;
  for (const auto& r : all) done.insert(experiment::KeyOf(r));
  if (!a.quiet)
    std::fprintf(stderr,
                 "advbo bench: %zu attacks x %zu instances, %s, shard %d/%d: %zu jobs (%zu done)\n",
                 ex.num_attacks(), ex.instances().size(), ex.DescribeRadius().c_str(), shard_k,
                 shard_n, jobs.size(), done.size());
  const InterruptHint hint("\nadvbo bench: interrupted; finished jobs are kept in " +
                           records.string() + ": run the same command again to resume\n");
  ProgressBar bar(static_cast<long>(jobs.size()), !a.quiet);
  long finished = 0;
  std::vector<Job> todo;
  for (const Job& job : jobs) {
    const experiment::Instance& inst = ex.instances()[job.instance];
    if (done.count({ex.attack(job.attack).name(), inst.index, inst.target}))
      bar.Update(++finished, "resumed", true);
    else
      todo.push_back(job);
  }
  std::mutex bar_mu;  // lanes report progress from their own threads
  ex.RunJobs(todo.size(), [&](size_t k) -> oracle::Lockstep::Commit {
    const Job& job = todo[k];
    const experiment::Instance& inst = ex.instances()[job.instance];
    const std::string name = ex.attack(job.attack).name();
    auto r = std::make_shared<experiment::JobResult>(
        ex.Run(job.instance, job.attack, [&](long q, double) {
          std::lock_guard<std::mutex> lock(bar_mu);
          bar.Update(finished,
                     name + " image " + std::to_string(inst.index) + " q=" + std::to_string(q),
                     false);
        }));
    return [&, r, name, inst] {  // in job order
      file.Append(r->record);
      all.push_back(r->record);
      if (!a.save_images.empty())
        saved += SaveInstanceImages(fs::path(a.save_images) / FolderNameOf(name), inst, *r,
                                    ex.images(), ex.epsilon());
      std::lock_guard<std::mutex> lock(bar_mu);
      bar.Update(++finished, name + (r->result.success ? " success" : " failed"), true);
    };
  });
  bar.Finish();
  file.Commit();
  WriteSummary(all, a.out_dir, true);
  folders.Keep();
  PrintModelNotes("advbo bench", ex);
  if (!a.quiet) PrintLockstepStats("advbo bench", ex);
  std::printf("records: %s; table, summary.json, curves.csv, curves.png in %s\n", records.c_str(),
              a.out_dir.c_str());
  if (!a.save_images.empty())
    std::printf("saved images: %ld verified 8-bit adversarial images in %s/<attack>/\n", saved,
                a.save_images.c_str());
  return 0;
}

int RunMerge(const BenchArgs& a) {
  if (a.out_dir.empty()) throw std::invalid_argument("-o/--out (the output folder) is required");
  if (a.merge_inputs.empty())
    throw std::invalid_argument("give the shard folders or record files to merge");
  std::map<experiment::RecordKey, nlohmann::json> merged;
  nlohmann::json settings;  // of the first record; every other record must match
  std::string first_file;
  for (const auto& in : a.merge_inputs) {
    std::vector<fs::path> files;
    if (fs::is_directory(in)) {
      files = experiment::ShardFiles(in, "records", ".jsonl");
    } else if (fs::exists(in)) {
      files.push_back(in);
    } else {
      throw std::runtime_error(in + ": no such file or folder");
    }
    if (files.empty())
      throw std::runtime_error(in + ": no records.jsonl or records.shard-*.jsonl files");
    for (const auto& f : files) {
      std::vector<nlohmann::json> recs = experiment::ReadRecords(f);
      if (settings.is_null() && !recs.empty()) {
        settings = experiment::RecordSettings(recs.front());
        first_file = f.string();
      }
      if (!recs.empty())
        CheckRecords(recs, settings, nullptr, f.string() + " (against " + first_file + ")");
      for (auto& r : recs) {
        const experiment::RecordKey key = experiment::KeyOf(r);  // before r is moved from
        merged[key] = std::move(r);
      }
    }
  }
  std::vector<nlohmann::json> all;
  for (auto& [k, r] : merged) all.push_back(std::move(r));
  experiment::CreatedFolders folders;
  folders.Create(a.out_dir);
  std::string text;
  for (const auto& r : all) text += r.dump() + "\n";
  experiment::WriteFileAtomic(fs::path(a.out_dir) / "records.jsonl", text);
  WriteSummary(all, a.out_dir, true);
  folders.Keep();
  std::printf("merged %zu records into %s\n", all.size(), a.out_dir.c_str());
  return 0;
}

}  // namespace

std::function<int()> RegisterBenchCommand(CLI::App& app) {
  auto a = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "Run several attacks on the same images, targets, oracle and budget and print the BOS^2\n"
      "paper's table (ASR, max/mean/median queries over successes, mean queries counting\n"
      "failures at the budget, seconds per instance, model share, bad queries: the share a\n"
      "Blacklight detector beside the model would flag). Writes records.jsonl\n"
      "(one line per attack x instance; an interrupted run resumes where it stopped),\n"
      "table.txt, summary.json, curves.csv and curves.png (success rate vs queries; under\n"
      "--goal min-distance the median distance vs queries) into\n"
      "the -o/--out folder. --shard k/n runs the jobs (instance i, attack j) with (i + j) mod n = "
      "k - 1; "
      "`advbo bench merge` combines shards.");
  cmd->add_option("--attacks", a->attacks,
                  "comma list of attack specs (a piece key=value continues the previous spec's "
                  "settings): " +
                      attacks::AttackHelp())
      ->default_val(a->attacks);
  AddExperimentOptions(cmd, a.get());
  cmd->add_option("--shard", a->shard, "run shard k of n (k/n)")->default_val("1/1");
  cmd->add_option("-o,--out,--out-dir", a->out_dir,
                  "output folder (required; --out-dir is the old name)");
  cmd->add_option("--save-images", a->save_images,
                  "folder for each attack's PNGs, one sub-folder per attack: clean, verified 8-bit "
                  "adversarial (inside the eps-ball, re-queried, written only when still "
                  "adversarial), amplified perturbation, and a hard-label run's closest "
                  "adversarial query (closest_*.png)");
  cmd->add_flag("-q,--quiet", a->quiet, "no progress bar");
  CLI::App* merge =
      cmd->add_subcommand("merge", "Combine shard folders or record files into one table");
  merge
      ->add_option("inputs", a->merge_inputs,
                   "shard folders (their records.jsonl / records.shard-*.jsonl) or record files")
      ->required();
  merge->add_option("-o,--out,--out-dir", a->out_dir, "output folder (--out-dir is the old name)")
      ->required();
  return [cmd, merge, a]() {
    if (merge->parsed()) return RunMerge(*a);
    return cmd->parsed() ? RunBench(*a) : 0;
  };
}

}  // namespace advbo::cli
