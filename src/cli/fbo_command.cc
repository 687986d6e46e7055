// `advbo fbo`: federated BO with N agents in lock-step (Dai 2021 thesis, Ch. 5 and 6) —
// standard TS, FTS, or DP-FTS-DE with its privacy accountant — on a built-in family of agent
// objectives. Writes rounds.jsonl, summary.json, table.txt, curves.csv and curves.png.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "algorithms/dp_fts_de/dp_fts_de.h"
#include "algorithms/fts/federated.h"
#include "algorithms/fts/federated_study.h"
#include "bo/design.h"
#include "cli/commands.h"
#include "cli/format.h"
#include "cli/option_table.h"
#include "cli/parse.h"
#include "cli/plot.h"
#include "cli/progress.h"
#include "cli/validators.h"
#include "experiment/records.h"
#include "experiment/spec.h"
#include "process/subprocess.h"

namespace advbo::cli {
namespace {
namespace fs = std::filesystem;
namespace alg = algorithms;

struct FboArgs {
  std::string algo = "dp-fts-de", family = "synthetic", schedule = "sqrt", out_dir;
  std::string mnist_dir = "data/mnist", command, bounds;
  double eval_timeout = 0;
  bool minimize = false, maximize = false;
  int agents = 0, rounds = 40, init = 0, features = 50, regions = 2, domain = 0;
  int weight_hold = 5, weight_decay = 5;
  double lengthscale = 0, noise = 0.01, gap = 0.02, q = 0.25, z = 1.0, clip = 11, delta = 0;
  bool no_local_init = false, uniform_weights = false, privacy_only = false, quiet = false;
  uint64_t seed = 0;
};

alg::FamilyOptions FamilyOptionsOf(const FboArgs& a) {
  alg::FamilyOptions o;
  o.agents = a.agents;
  o.domain = a.domain;
  o.seed = a.seed;
  o.lengthscale = a.lengthscale;
  o.gap = a.gap;
  o.noise = a.noise;
  o.mnist_dir = a.mnist_dir;
  return o;
}

// Agents given by an external command: `CMD AGENT x_1 ... x_d` prints agent AGENT's objective
// at x (caller units in --bounds) as its last stdout line; maximised unless --minimize. The
// domain is --domain scrambled-Sobol points of the box (default 1,000).
std::unique_ptr<alg::AgentFamily> CommandFamily(const FboArgs& a) {
  auto fam = std::make_unique<alg::AgentFamily>();
  Eigen::VectorXd lb, ub;
  ParseBounds(a.bounds, 0, &lb, &ub);
  const int k = a.domain > 0 ? a.domain : 1000;
  bo::Rng rng(bo::DeriveSeed(a.seed, 0x636d64));
  fam->x = bo::MakeDesign(bo::DesignKind::kSobol, k, Eigen::VectorXd::Zero(lb.size()),
                          Eigen::VectorXd::Ones(lb.size()), rng);
  const Eigen::MatrixXd x = fam->x;
  const double sign = a.minimize ? -1.0 : 1.0;
  const std::string cmd = a.command;
  const double timeout = a.eval_timeout;
  auto f = [x, lb, ub, sign, cmd, timeout](int n, int i) {
    const Eigen::VectorXd xi = lb + x.row(i).transpose().cwiseProduct(ub - lb);
    return sign * process::RunObjectiveCommand(cmd, std::to_string(n), xi, timeout);
  };
  fam->evaluate = f;
  // The command's noise is its own: the best observed output stands for the truth.
  auto seen =
      std::make_shared<std::vector<std::vector<double>>>(a.agents, std::vector<double>(k, NAN));
  fam->evaluate = [f, seen](int n, int i) {
    const double y = f(n, i);
    (*seen)[n][i] = y;  // agent n's thread only
    return y;
  };
  fam->truth = [seen](int n, int i) { return (*seen)[n][i]; };
  fam->best_label = a.minimize ? "mean best value (minimised)" : "mean best value";
  fam->report_sign = sign;
  fam->description = "command: " + cmd + " (" + std::to_string(k) + " Sobol points of the box)";
  fam->config = {{"domain", k}, {"command", cmd}, {"bounds", a.bounds}, {"minimize", a.minimize}};
  return fam;
}

void Check(const FboArgs& a) {
  if (a.algo != "ts" && a.algo != "fts" && a.algo != "dp-fts-de")
    throw std::invalid_argument("--algo must be ts, fts or dp-fts-de, not '" + a.algo + "'");
  if (a.family != "synthetic" && a.family != "mnist-lssvm" && a.family != "command")
    throw std::invalid_argument(
        "--family must be synthetic or mnist-lssvm (or give --command), "
        "not '" +
        a.family + "'");
  if (a.family == "command" && a.bounds.empty())
    throw std::invalid_argument("--command needs --bounds LO:HI[,LO:HI...]");
  if (!(a.eval_timeout >= 0)) throw std::invalid_argument("--eval-timeout must be >= 0");
  if (a.schedule != "sqrt" && a.schedule != "sqrt-all" && a.schedule != "square")
    throw std::invalid_argument(
        "--schedule must be sqrt (1 - 1/sqrt(t), p_1 = p_2), sqrt-all (1 - 1/sqrt(t), p_1 = 0) "
        "or square (1 - 1/t^2, p_1 = p_2)");
  if (!(a.q > 0 && a.q <= 1)) throw std::invalid_argument("--q must be in (0, 1]");
  if (!(a.z >= 0) || !std::isfinite(a.z)) throw std::invalid_argument("--z must be >= 0");
  if (!(a.clip > 0) || !std::isfinite(a.clip)) throw std::invalid_argument("--clip must be > 0");
  FamilyOptionsOf(a).Validate();  // --agents, --domain, --lengthscale, --gap, --noise
  if (a.delta != 0 && !(a.delta > 0 && a.delta < 1))
    throw std::invalid_argument("--delta must be in (0, 1)");
  if (a.agents < 1 || a.rounds < 1 || a.init < 1 || a.features < 1 || a.regions < 1)
    throw std::invalid_argument(
        "--agents, --rounds, --init, --features and --regions must be >= 1");
  if (a.algo == "fts" && a.agents < 2) throw std::invalid_argument("--algo fts needs >= 2 agents");
  if (a.family == "mnist-lssvm" && a.agents > 48)
    throw std::invalid_argument(
        "--family mnist-lssvm has 500 images per agent: at most 48 agents "
        "in the 24,262-image pool");
  if (!a.privacy_only && a.out_dir.empty())
    throw std::invalid_argument("-o/--out (the output folder) is required");
}

// The (epsilon, delta) of DP-FTS-DE's releases (null for ts, fts and z = 0).
nlohmann::json PrivacyOf(const FboArgs& a, double delta) {
  if (a.algo != "dp-fts-de" || !(a.z > 0)) return nullptr;
  const alg::PrivacyLoss loss = alg::PrivacyLossOf(a.q, a.z, a.rounds, delta);
  return {{"epsilon", loss.epsilon},
          {"delta", delta},
          {"order", loss.order},
          {"q", a.q},
          {"z", a.z},
          {"releases", a.rounds},
          {"accountant", "Renyi DP of the subsampled Gaussian mechanism, orders 2..256"}};
}

alg::FederatedOptions FederatedOptionsOf(const FboArgs& a) {
  alg::FederatedOptions o;
  o.algo = a.algo == "ts"    ? alg::FederatedAlgo::kTs
           : a.algo == "fts" ? alg::FederatedAlgo::kFts
                             : alg::FederatedAlgo::kDpFtsDe;
  o.rounds = a.rounds;
  o.initial_points = a.init;
  o.local_init = !a.no_local_init;
  o.regions = a.regions;
  o.region_weights = !a.uniform_weights;
  o.weight_hold = a.weight_hold;
  o.weight_decay = a.weight_decay;
  o.schedule =
      a.schedule == "sqrt" ? alg::FtsSchedule::kInverseSqrt : alg::FtsSchedule::kInverseSquare;
  o.server = {a.q, a.z, a.clip};
  o.lengthscale = a.lengthscale;
  o.noise_variance = a.noise;
  o.features = a.features;
  return o;
}

// Runs the study, writing rounds.jsonl (through a .partial, removed if a round fails).
alg::StudyCurves RunRounds(const FboArgs& a, const alg::AgentFamily& fam,
                           const alg::FederatedOptions& o, const fs::path& rounds_path) {
  const std::string partial_path = rounds_path.string() + ".partial";
  experiment::RemoveUnlessReleased partial(partial_path);
  std::ofstream rounds_out(partial_path);
  if (!rounds_out) throw std::runtime_error(rounds_path.string() + ": cannot write");
  ProgressBar bar(a.rounds + 1, !a.quiet);
  const std::string label = fam.maximum.empty() ? "mean best " : "mean regret ";
  const alg::StudyCurves c =
      alg::RunFederatedStudy(fam, a.agents, o, a.seed, [&](const nlohmann::json& rec, double mean) {
        rounds_out << rec.dump() << "\n";
        rounds_out.flush();
        bar.Update(rec["round"].get<int>() + 1, label + Fmt(mean, 4), true);
      });
  bar.Finish();
  rounds_out.close();
  if (!rounds_out) throw std::runtime_error(partial_path + ": write failed");
  fs::rename(partial_path, rounds_path);
  partial.Release();
  return c;
}

std::string FboTable(const FboArgs& a, const alg::AgentFamily& fam, const alg::StudyCurves& c,
                     const std::string& metric, const nlohmann::json& privacy, double delta) {
  std::ostringstream table;
  table << "advbo fbo: " << a.algo << " on " << fam.description << "\n"
        << a.agents << " agents, " << a.rounds << " rounds after " << a.init
        << " initial points each, M = " << a.features << " features, seed " << a.seed << "\n";
  std::vector<int> marks;
  for (int t : {10, 20, 30})
    if (t < a.rounds) marks.push_back(t);
  marks.push_back(a.rounds);
  for (int t : marks)
    table << "  round " << t << ": " << metric << " " << Fmt(c.mean[t], 4) << " +- "
          << Fmt(c.se[t], 4) << "\n";
  const double fraction = c.selected ? double(c.clipped) / c.selected : 0.0;
  if (a.algo == "dp-fts-de")
    table << "  clipped " << c.clipped << " of " << c.selected << " selected vectors ("
          << Fmt(100.0 * fraction, 2) << " %)\n";
  if (!privacy.is_null())
    table << "  privacy: (" << Fmt(privacy["epsilon"].get<double>(), 3) << ", "
          << experiment::FormatNumber(delta)
          << ")-DP for the server's releases (moments accountant)\n";
  return table.str();
}

// summary.json, table.txt, curves.csv and curves.png in --out; returns the table.
std::string WriteFboOutputs(const FboArgs& a, const alg::AgentFamily& fam,
                            const alg::FederatedOptions& o, const alg::StudyCurves& c,
                            const nlohmann::json& privacy, double delta) {
  const bool regret = !fam.maximum.empty();
  const std::string metric = regret ? "mean simple regret over agents" : fam.best_label;
  nlohmann::json summary = {{"algo", a.algo},
                            {"family", a.family},
                            {"agents", a.agents},
                            {"rounds", a.rounds},
                            {"initial_points", a.init},
                            {"features", a.features},
                            {"lengthscale", a.lengthscale},
                            {"noise", a.noise},
                            {"schedule", a.schedule},
                            {"seed", a.seed},
                            {"metric", metric},
                            {"final", c.mean.back()},
                            {"final_se", c.se.back()},
                            {"seconds", c.seconds},
                            {"privacy", privacy},
                            {"family_config", fam.config}};
  if (a.algo == "dp-fts-de")
    summary.update({{"regions", a.regions},
                    {"q", a.q},
                    {"z", a.z},
                    {"clip", a.clip},
                    {"local_init", o.local_init},
                    {"region_weights", o.region_weights},
                    {"clipped_fraction", c.selected ? double(c.clipped) / c.selected : 0.0}});
  const std::string table = FboTable(a, fam, c, metric, privacy, delta);
  const fs::path dir(a.out_dir);
  experiment::WriteFileAtomic(dir / "summary.json", summary.dump(2) + "\n");
  experiment::WriteFileAtomic(dir / "table.txt", table);
  std::ostringstream csv;
  csv << "round," << (regret ? "mean_simple_regret" : "mean_best") << ",se\n";
  for (size_t t = 0; t < c.mean.size(); ++t)
    csv << t << "," << Fmt(c.mean[t], 6) << "," << Fmt(c.se[t], 6) << "\n";
  experiment::WriteFileAtomic(dir / "curves.csv", csv.str());
  double lo = c.mean[0], hi = c.mean[0];
  for (double v : c.mean) lo = std::min(lo, v), hi = std::max(hi, v);
  WriteLinePlot(dir / "curves.png", {{a.algo, c.mean}}, 1.0, a.rounds, regret ? 0.0 : lo,
                hi + 0.05 * (hi - lo + 1e-12), "round", metric);
  return table;
}

int RunFbo(FboArgs a) {
  if (!a.command.empty()) a.family = "command";
  const bool synthetic = a.family == "synthetic";
  if (a.agents == 0) a.agents = synthetic ? 200 : 20;
  if (a.init == 0) a.init = synthetic ? 10 : 3;
  if (a.lengthscale == 0) a.lengthscale = synthetic ? 0.03 : 0.1;
  Check(a);
  const double delta = a.delta > 0 ? a.delta : std::pow(a.agents, -1.1);  // Sec. 6.5
  const nlohmann::json privacy = PrivacyOf(a, delta);
  if (a.privacy_only) {
    if (privacy.is_null())
      throw std::invalid_argument("--privacy-only needs --algo dp-fts-de with --z > 0");
    std::printf(
        "(epsilon, delta)-DP of the server's %d releases: epsilon = %s at delta = %s "
        "(q = %s, z = %s, RDP order %d)\n",
        a.rounds, Fmt(privacy["epsilon"].get<double>(), 4).c_str(),
        experiment::FormatNumber(delta).c_str(), Fmt(a.q, 3).c_str(), Fmt(a.z, 3).c_str(),
        privacy["order"].get<int>());
    return 0;
  }
  if (a.family == "command") {
    Eigen::VectorXd lb, ub;
    ParseBounds(a.bounds, 0, &lb, &ub);  // a bad box fails before any output
  }
  const std::unique_ptr<alg::AgentFamily> fam = synthetic ? alg::SyntheticFamily(FamilyOptionsOf(a))
                                                : a.family == "command"
                                                    ? CommandFamily(a)
                                                    : alg::MnistLssvmFamily(FamilyOptionsOf(a));
  const alg::FederatedOptions o = FederatedOptionsOf(a);
  experiment::CreatedFolders folders;  // removed again if the run fails
  folders.Create(a.out_dir);
  const fs::path rounds_path = fs::path(a.out_dir) / "rounds.jsonl";
  const alg::StudyCurves c = RunRounds(a, *fam, o, rounds_path);
  const std::string table = WriteFboOutputs(a, *fam, o, c, privacy, delta);
  folders.Keep();
  std::printf("\n%s\nrounds: %s; summary.json, table.txt, curves.csv, curves.png in %s\n",
              table.c_str(), rounds_path.c_str(), a.out_dir.c_str());
  return 0;
}

}  // namespace

// The options of the command, in --help order (cli/option_table.h).
const OptionRow<FboArgs> kFboOptions[] = {
    Value("--algo", &FboArgs::algo, "ts | fts | dp-fts-de", std::nullopt, "dp-fts-de"),
    Value("--family", &FboArgs::family, "synthetic | mnist-lssvm", std::nullopt, "synthetic"),
    Value("--agents", &FboArgs::agents, "N agents (default 200 synthetic, 20 mnist-lssvm)",
          IntInRange(1, 10000)),
    Value("--rounds", &FboArgs::rounds, "T rounds after initialisation", IntInRange(1, 1000000),
          40),
    Value("--init", &FboArgs::init, "initial points per agent (default 10 synthetic, 3 real)",
          IntInRange(1, 100000)),
    Value("--features", &FboArgs::features, "M shared random features", IntInRange(1, 100000), 50),
    Value("--lengthscale", &FboArgs::lengthscale,
          "SE lengthscale of the agents' GPs and features on [0,1]^d (default 0.03 "
          "synthetic, 0.1 real)",
          NumberIn(0, 1e6, true)),
    Value("--noise", &FboArgs::noise, "observation noise variance sigma^2", NumberIn(0, 1e6, true),
          0.01),
    Value("--gap", &FboArgs::gap, "synthetic: per-point offset d of each agent", NumberIn(0, 1e6),
          0.02),
    Value("--domain", &FboArgs::domain,
          "domain size (default 1000 synthetic grid points, 900 = 30 x 30 real)",
          IntInRange(2, 100000)),
    Value("--schedule", &FboArgs::schedule,
          "p_t: sqrt (1 - 1/sqrt t, p_1 = p_2; FTS) | sqrt-all (1 - 1/sqrt t, p_1 = 0; "
          "DP-FTS-DE synthetic) | square (1 - 1/t^2; real data)",
          std::nullopt, "sqrt"),
    Value("--regions", &FboArgs::regions, "dp-fts-de: P sub-regions", IntInRange(1, 100000), 2),
    Value("--q", &FboArgs::q, "dp-fts-de: Poisson sampling rate of agents", NumberIn(0, 1, true),
          0.25),
    Value("--z", &FboArgs::z, "dp-fts-de: noise multiplier (0 = no noise, no privacy)",
          NumberIn(0, 1e6), 1.0),
    Value("--clip", &FboArgs::clip, "dp-fts-de: clipping threshold S", NumberIn(0, 1e12, true), 11),
    Value("--weight-hold", &FboArgs::weight_hold,
          "dp-fts-de: rounds with DE exponent a = 16 before it decays (5; real 10)",
          IntInRange(0, 1000000), 5),
    Value("--weight-decay", &FboArgs::weight_decay,
          "dp-fts-de: rounds over which a decays linearly to 1 (5; real 30)",
          IntInRange(2, 1000000), 5),
    Flag("--no-local-init", &FboArgs::no_local_init,
         "dp-fts-de ablation: initial points from the whole domain"),
    Flag("--uniform-weights", &FboArgs::uniform_weights,
         "dp-fts-de ablation: equal weights for every agent in every region"),
    Value("--delta", &FboArgs::delta, "delta of (epsilon, delta)-DP (default N^-1.1)",
          NumberIn(0, 1, true, true)),
    Flag("--privacy-only", &FboArgs::privacy_only,
         "print the privacy loss epsilon for --q, --z, --rounds, --delta and exit"),
    Value("--command,-c", &FboArgs::command,
          "agents' objective: `CMD AGENT x1 ... xd` prints agent AGENT's value at x "
          "($ADVBO_AGENT, $ADVBO_X set) as its last stdout line; maximised unless "
          "--minimize; the domain is --domain Sobol points of --bounds. The agents' GPs assume "
          "values on a unit scale (zero prior mean, variance 1): print them scaled"),
    Value("--bounds", &FboArgs::bounds, "--command: the box LO:HI[,LO:HI...]"),
    Flag("--minimize", &FboArgs::minimize, "--command: minimise the printed value"),
    Custom<FboArgs>([](CLI::App* cmd, FboArgs* a) {
      return cmd
          ->add_flag("--maximize", a->maximize,
                     "--command: maximise the printed value (the default; as `advbo bo "
                     "--maximize`)")
          ->excludes(cmd->get_option("--minimize"));
    }),
    Value("--eval-timeout", &FboArgs::eval_timeout,
          "--command: seconds per evaluation (0 = none); a failure stops the run",
          NumberIn(0, experiment::kMaxHttpTimeout), 0),
    Value("--mnist-dir", &FboArgs::mnist_dir, "mnist-lssvm: MNIST IDX folder", std::nullopt,
          "data/mnist"),
    Value("--seed", &FboArgs::seed, "run seed", UnsignedInt(), 0),
    Value("-o,--out,--out-dir", &FboArgs::out_dir, "output folder (--out-dir is the old name)"),
    Flag("-q,--quiet", &FboArgs::quiet, "no progress bar"),
};

std::function<int()> RegisterFboCommand(CLI::App& app) {
  auto a = std::make_shared<FboArgs>();
  CLI::App* cmd = app.add_subcommand(
      "fbo",
      "Federated BO: N agents in lock-step (Dai 2021 thesis, Ch. 5-6).\n"
      "ts: every agent runs Thompson sampling alone. fts: with probability 1 - p_t an agent\n"
      "  maximises another agent's sampled function (its omega of the last round). dp-fts-de:\n"
      "  a server subsamples (q), clips (S / sqrt(P)), averages with distributed-exploration\n"
      "  weights per sub-region and adds Gaussian noise (z S phi_max / q); agents maximise the\n"
      "  broadcast piecewise. Families: synthetic (GP draw + per-agent +-gap), mnist-lssvm\n"
      "  (each agent tunes an LS-SVM on its own MNIST slice). Writes rounds.jsonl, summary.json,\n"
      "  table.txt, curves.csv and curves.png into the -o/--out folder.");

  AddOptionTable(cmd, a.get(), kFboOptions);
  return [cmd, a]() { return cmd->parsed() ? RunFbo(*a) : 0; };
}

}  // namespace advbo::cli
