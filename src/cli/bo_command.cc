// `advbo bo`: Bayesian optimisation of a built-in test function or of an external command
// on the shared BO core (GP-UCB / EI / PI / Thompson sampling), with a JSONL trace and a
// summary (best x, best y, simple regret where the optimum is known).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "algorithms/runner/bo_algorithms.h"
#include "bo/bo_loop.h"
#include "bo/test_functions.h"
#include "bo/trace.h"
#include "cli/bo_tune.h"
#include "cli/commands.h"
#include "cli/format.h"
#include "cli/option_table.h"
#include "cli/parse.h"
#include "cli/progress.h"
#include "cli/validators.h"
#include "experiment/spec.h"
#include "process/subprocess.h"
#include "text/numbers.h"

namespace advbo::cli {
namespace {
using algorithms::AlgoArgs;
using algorithms::AlgoRun;

struct BoArgs {
  std::string function, command, bounds, acq = "ei", beta = "kandasamy2015", kernel = "matern52";
  std::string noise = "fit", init = "sobol", on_error = "stop", out, candidates;
  int dim = 0, budget = 40, refit_every = 1, patience = 0, ts_features = 500;
  uint64_t seed = 0;
  long long function_seed = -1;
  double lengthscale = 0.2, target = NAN, xi = 0.0, eval_timeout = 0;
  bool maximize = false, minimize = false, isotropic = false, quiet = false, budget_given = false;
  AlgoArgs algo;
  TuneArgs tune;
};

// BO loop options from the arguments; throws std::invalid_argument on a bad value.
bo::BoLoopOptions LoopOptions(const BoArgs& a) {
  bo::BoLoopOptions opt;
  opt.goal = a.maximize ? bo::Goal::kMaximize : bo::Goal::kMinimize;
  opt.budget = a.budget;
  opt.acquisition = bo::ParseAcquisition(a.acq);
  opt.beta = bo::ParseExplorationWeight(a.beta);
  opt.kernel = bo::ParseKernelFamily(a.kernel);
  opt.ard = !a.isotropic;
  opt.refit_every = a.refit_every;
  opt.patience = a.patience;
  opt.target = a.target;
  opt.xi = a.xi;
  opt.ts_features = a.ts_features;
  ParseInit(a.init, &opt.initial_design, &opt.initial_points);
  if (a.noise == "fit") {
    opt.fit.fit_noise = true;
  } else {
    char* end = nullptr;
    const double v = std::strtod(a.noise.c_str(), &end);
    if (end == a.noise.c_str() || *end != '\0' || !(v >= 0))
      throw std::invalid_argument(
          "--noise must be 'fit' or a variance >= 0 (0 = noise-free), got '" + a.noise + "'");
    opt.fit.fit_noise = false;
    opt.noise_variance = v;
  }
  if (a.on_error == "stop")
    opt.on_error = bo::OnError::kStop;
  else if (a.on_error == "continue")
    opt.on_error = bo::OnError::kContinue;
  else
    throw std::invalid_argument("--on-error must be stop or continue");
  return opt;
}

// The rows of a --candidates CSV file [M, d]; throws naming the file.
Eigen::MatrixXd ReadCandidates(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(path + ": cannot read the candidates file");
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  return ParseCandidates(text, path);
}

// The function to optimise: a test function, an HPO task (final validation error after N
// epochs, over the task's search box) or the external command; its box and name.
struct Problem {
  bo::TestFunction tf;  // minimum NaN for commands and tasks
  bo::Objective objective;
  Eigen::VectorXd lb, ub;
  std::string name;
  std::shared_ptr<hpo::HpoTask> task;  // --task only
};

// `candidates` is the --candidates file's rows (read once by the caller; empty without it).
Problem MakeProblem(const BoArgs& a, const Eigen::MatrixXd& candidates) {
  Problem p;
  if (!a.tune.task.empty()) {
    if (!a.bounds.empty())
      throw std::invalid_argument("--bounds is for --command; a --task has its own search box");
    if (a.maximize)
      throw std::invalid_argument("--task minimises the validation error; drop --maximize");
    p.task = MakeTuneTask(a.tune);
    p.lb = p.task->SearchLower();
    p.ub = p.task->SearchUpper();
    p.name = p.task->name();
    p.objective = [task = p.task, epochs = TaskEpochs(a.tune, *p.task)](const Eigen::VectorXd& z) {
      return task->Evaluate(task->ToNatural(z), epochs).back();
    };
  } else if (!a.function.empty()) {
    if (!a.bounds.empty())
      throw std::invalid_argument("--bounds is for --command; test functions have fixed domains");
    const uint64_t fseed = a.function_seed >= 0 ? static_cast<uint64_t>(a.function_seed) : a.seed;
    p.tf = bo::MakeTestFunction(a.function, a.dim, fseed, a.lengthscale);
    p.objective = p.tf.f;
    p.lb = p.tf.lb;
    p.ub = p.tf.ub;
    p.name = p.tf.name;
  } else {
    if (!a.bounds.empty()) {
      ParseBounds(a.bounds, a.dim, &p.lb, &p.ub);
    } else if (!a.candidates.empty()) {  // the candidates' bounding box
      const Eigen::MatrixXd& c = candidates;
      p.lb = c.colwise().minCoeff().transpose();
      p.ub = c.colwise().maxCoeff().transpose();
      for (Eigen::Index i = 0; i < p.lb.size(); ++i)
        if (!(p.ub(i) > p.lb(i))) p.lb(i) -= 0.5, p.ub(i) += 0.5;  // one value: any width
    } else {
      throw std::invalid_argument("--command needs --bounds LO:HI[,LO:HI...] or --candidates");
    }
    p.objective = [cmd = a.command, t = a.eval_timeout](const Eigen::VectorXd& x) {
      return process::RunObjectiveCommand(cmd, "", x, t);
    };
    p.name = "command";
  }
  return p;
}

// PO-GP-UCB runs an isotropic kernel and the paper's beta_t (Srinivas et al. with delta',
// algorithms/po_gp_ucb ModelerLoopOptions) whatever --isotropic and --beta say; the trace
// and the printout name what actually ran.
bool RunsArd(const BoArgs& a) { return !a.isotropic && a.algo.algo != "po-gp-ucb"; }
std::string RunsBeta(const BoArgs& a) {
  return a.algo.algo == "po-gp-ucb"
             ? "srinivas2010 (delta' = " + experiment::FormatNumber(a.algo.po_delta_prime) + ")"
             : a.beta;
}

// The trace's first line: everything that changes the run.
nlohmann::json ConfigRecord(const BoArgs& a, const Problem& p) {
  nlohmann::json cfg = {
      {"type", "config"},
      {"objective", p.name},
      {"command", a.command.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.command)},
      {"dim", p.lb.size()},
      {"lb", bo::JsonArray(p.lb)},
      {"ub", bo::JsonArray(p.ub)},
      {"goal", a.maximize ? "max" : "min"},
      {"acquisition", a.acq},
      {"beta", RunsBeta(a)},
      {"kernel", a.kernel},
      {"ard", RunsArd(a)},
      {"noise", a.noise},
      {"init", a.init},
      {"budget", a.budget},
      {"refit_every", a.refit_every},
      {"eval_timeout", a.eval_timeout},
      {"seed", a.seed}};
  cfg.update(algorithms::AlgorithmConfig(a.algo));
  if (p.task) {
    cfg.update(TaskConfig(a.tune, *p.task));
    cfg["epochs"] = TaskEpochs(a.tune, *p.task);
  }
  if (!a.candidates.empty()) cfg["candidates"] = a.candidates;
  if (a.function == "gp-sample") {
    cfg["lengthscale"] = a.lengthscale;
    cfg["function_seed"] = a.function_seed >= 0 ? static_cast<uint64_t>(a.function_seed) : a.seed;
  }
  return cfg;
}

// Wall, objective and BO seconds of a finished run.
struct Timing {
  double total = 0, objective = 0, bo = 0;
};

// The trace's last line.
nlohmann::json SummaryRecord(const BoArgs& a, const Problem& p, const bo::BoResult& res,
                             const Timing& t) {
  const bool regret_known = !a.maximize && std::isfinite(p.tf.minimum);
  nlohmann::json sum = {
      {"type", "summary"},
      {"objective", p.name},
      {"evaluations", res.steps.size()},
      {"failures", res.failures},
      {"best_x", res.best_x.size() ? bo::JsonArray(res.best_x) : nlohmann::json(nullptr)},
      {"best_y", res.best_y},
      {"stop_reason", res.stop_reason},
      {"final_kernel", res.kernel},
      {"seconds_total", t.total},
      {"seconds_bo", t.bo},
      {"seconds_objective", t.objective},
      {"seed", a.seed}};
  sum["known_minimum"] =
      std::isfinite(p.tf.minimum) ? nlohmann::json(p.tf.minimum) : nlohmann::json(nullptr);
  sum["minimum_estimated"] = p.tf.minimum_estimated;
  sum["simple_regret"] =
      regret_known ? nlohmann::json(res.best_y - p.tf.minimum) : nlohmann::json(nullptr);
  return sum;
}

void PrintSummary(const BoArgs& a, const Problem& p, const bo::BoResult& res, const Timing& t) {
  const bool regret_known = !a.maximize && std::isfinite(p.tf.minimum);
  std::printf("\n%-22s %s%s\n", "objective", p.name.c_str(),
              a.command.empty() ? "" : (" (" + a.command + ")").c_str());
  std::printf("%-22s %s, %s%s kernel, noise %s, seed %llu\n", "BO", a.acq.c_str(), a.kernel.c_str(),
              RunsArd(a) ? "-ARD" : "", a.noise.c_str(), static_cast<unsigned long long>(a.seed));
  std::printf("%-22s %zu of %d (%d failed), stopped by %s\n", "evaluations", res.steps.size(),
              a.budget, res.failures, res.stop_reason.c_str());
  std::printf("%-22s %s\n", a.maximize ? "best y (max)" : "best y (min)",
              Fmt(res.best_y, 6).c_str());
  std::printf(
      "%-22s [%s]\n", "best x",
      res.best_x.size() ? text::JoinG(res.best_x.data(), res.best_x.size(), " ").c_str() : "");
  if (std::isfinite(p.tf.minimum))
    std::printf("%-22s %s%s\n", "known minimum", Fmt(p.tf.minimum, 6).c_str(),
                p.tf.minimum_estimated ? " (estimated numerically)" : "");
  if (regret_known)
    std::printf("%-22s %s\n", "simple regret", Fmt(res.best_y - p.tf.minimum, 6).c_str());
  std::printf("%-22s %s s (BO %s s, objective %s s)\n", "time", Fmt(t.total, 2).c_str(),
              Fmt(t.bo, 2).c_str(), Fmt(t.objective, 2).c_str());
  if (!a.out.empty()) std::printf("%-22s %s\n", "trace", a.out.c_str());
}

// Checked here as well as by BoSession so that the message names the --candidates file.
void CheckCandidates(const std::string& path, const Eigen::MatrixXd& c, const Problem& p) {
  if (c.cols() != p.lb.size())
    throw std::invalid_argument(path + ": " + std::to_string(c.cols()) + " columns for a " +
                                std::to_string(p.lb.size()) + "-dimensional box");
  for (Eigen::Index i = 0; i < c.rows(); ++i)
    if ((c.row(i).transpose().array() < p.lb.array()).any() ||
        (c.row(i).transpose().array() > p.ub.array()).any())
      throw std::invalid_argument(path + ": candidate " + std::to_string(i + 1) +
                                  " lies outside the box");
}

// One evaluation: its trace record (with regret and the task's named parameters), a failure
// message, the progress bar. Returns true (go on).
bool ReportStep(const bo::BoStep& s, const Problem& p, bool regret_known, bo::JsonlTrace* trace,
                ProgressBar* bar) {
  if (trace) {
    nlohmann::json r = bo::StepRecord(s);
    if (regret_known) r["simple_regret"] = s.best_y - p.tf.minimum;
    if (p.task) r["params"] = algorithms::TaskParams(p.task.get(), s.x);
    trace->Write(r);
  }
  if (!s.ok)
    std::fprintf(stderr, "\nadvbo bo: evaluation %d failed: %s\n", s.evaluation, s.error.c_str());
  std::string status = "best y=" + Fmt(s.best_y, 5);
  if (regret_known) status += " regret=" + Fmt(s.best_y - p.tf.minimum, 5);
  bar->Update(s.evaluation, status, true);
  return true;
}

// The algorithm-specific lines: RM-GP-UCB's meta-task weights, the batch algorithms' batches.
void PrintAlgorithmSummary(const AlgoArgs& algo, const nlohmann::json& summary) {
  if (summary.contains("final_weights")) {
    std::string w;
    for (size_t i = 0; i < algo.meta.size(); ++i)
      w += (i ? ", " : "") + algo.meta[i] + " " + Fmt(summary["final_weights"][i].get<double>(), 3);
    std::printf("%-22s %s (nu = %s)\n", "meta-task weights", w.c_str(),
                Fmt(summary["final_nu"].get<double>(), 3).c_str());
  }
  if (summary.contains("batches"))
    std::printf("%-22s %d batches for %d evaluations after the design (speedup %.2f)\n", "batches",
                summary["batches"].get<int>(), summary["batch_evaluations"].get<int>(),
                summary["speedup"].get<double>());
}

int RunBoCommand(const BoArgs& a) {
  // ---- Validate everything before any evaluation or output file.
  if (IsEpochAlgorithm(a.algo.algo)) {
    if (!a.function.empty())
      throw std::invalid_argument("--algo " + a.algo.algo +
                                  " tunes training runs: use --task "
                                  "NAME or --command CMD, not --function");
    if (a.maximize)
      throw std::invalid_argument("--algo " + a.algo.algo +
                                  " minimises the validation error; "
                                  "drop --maximize");
    TuneRun r;
    r.algo = a.algo.algo;
    r.command = a.command;
    r.bounds = a.bounds;
    r.out = a.out;
    r.beta = a.beta;
    r.dim = a.dim;
    r.max_evaluations = a.budget_given ? a.budget : 0;
    r.seed = a.seed;
    r.eval_timeout = a.eval_timeout;
    r.quiet = a.quiet;
    return RunTune(a.tune, r);
  }
  if (int(!a.function.empty()) + int(!a.command.empty()) + int(!a.tune.task.empty()) != 1)
    throw std::invalid_argument(
        "give exactly one of --function NAME, --task NAME or --command CMD");
  bo::BoLoopOptions opt = LoopOptions(a);
  if (!a.candidates.empty()) opt.candidates = ReadCandidates(a.candidates);
  const Problem p = MakeProblem(a, opt.candidates);
  if (!a.candidates.empty()) CheckCandidates(a.candidates, opt.candidates, p);
  const bool regret_known = !a.maximize && std::isfinite(p.tf.minimum);
  algorithms::CheckAlgorithm(a.algo, opt, regret_known ? p.tf.minimum : NAN);
  AlgoArgs algo = a.algo;
  if (!algo.meta.empty())
    algo.meta_tasks = algorithms::LoadMetaTasks(algo.meta, p.lb, p.ub, a.maximize);
  std::unique_ptr<bo::JsonlTrace> trace;
  if (!a.out.empty()) {
    trace = std::make_unique<bo::JsonlTrace>(a.out);
    trace->Write(ConfigRecord(a, p));
  }

  ProgressBar bar(a.budget, !a.quiet);
  bo::Rng rng(a.seed);
  const auto t0 = std::chrono::steady_clock::now();
  auto on_step = [&](const bo::BoStep& s) {
    return ReportStep(s, p, regret_known, trace.get(), &bar);
  };
  const AlgoRun run = algorithms::RunAlgorithm(algo, p.objective, p.lb, p.ub, opt, a.seed, rng,
                                               /*concurrent=*/!a.command.empty(),
                                               regret_known ? p.tf.minimum : NAN, on_step);
  const bo::BoResult& res = run.result;
  bar.Finish();
  Timing t;
  t.total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const auto& s : res.steps) {
    t.objective += s.seconds_objective;
    t.bo += s.seconds_bo;
  }
  if (trace) {
    nlohmann::json summary = SummaryRecord(a, p, res, t);
    summary.update(run.summary);
    trace->Write(summary);
    trace->Commit();
  }
  PrintSummary(a, p, res, t);
  PrintAlgorithmSummary(algo, run.summary);
  return res.stop_reason == "evaluation failed" || res.best_x.size() == 0 ? 2 : 0;
}

}  // namespace

// The options of the command, in --help order (cli/option_table.h).
const OptionRow<BoArgs> kBoOptions[] = {
    Custom<BoArgs>([](CLI::App* cmd, BoArgs* a) {
      std::string names;
      for (const auto& n : bo::TestFunctionNames()) names += (names.empty() ? "" : ", ") + n;
      return cmd->add_option("--function,-f", a->function, "test function: " + names);
    }),
    Value("--command,-c", &BoArgs::command, "external objective command (see above)"),
    Value("--bounds", &BoArgs::bounds,
          "box for --command: LO:HI (all coordinates, with --dim) or LO:HI,LO:HI,..."),
    Value("--dim,-d", &BoArgs::dim,
          "dimension: for ackley, rosenbrock, michalewicz, gp-sample (default 2) and "
          "for --command with a single LO:HI",
          IntInRange(1, 1000)),
    Flag("--maximize", &BoArgs::maximize, "maximise instead of minimise"),
    Custom<BoArgs>([](CLI::App* cmd, BoArgs* a) {
      return cmd
          ->add_flag("--minimize", a->minimize, "minimise (the default; as `advbo fbo --minimize`)")
          ->excludes(cmd->get_option("--maximize"));
    }),
    Value("--acq", &BoArgs::acq, "acquisition: ucb | ei | pi | ts (Thompson sampling, RFF)",
          std::nullopt, "ei"),
    Value("--beta", &BoArgs::beta,
          "UCB exploration weight: kandasamy2015 (0.2 d log 2t) | srinivas2010 | "
          "r2b2_ref (0.5 d log 2t) | constant:V",
          std::nullopt, "kandasamy2015"),
    Value("--xi", &BoArgs::xi, "EI/PI improvement margin (standardised units)", NumberIn(0, 1e6),
          0.0),
    Value("--kernel", &BoArgs::kernel, "GP kernel: se | matern12 | matern32 | matern52",
          std::nullopt, "matern52"),
    Flag("--isotropic", &BoArgs::isotropic, "one lengthscale for all inputs (default: ARD)"),
    Value("--noise", &BoArgs::noise,
          "observation noise variance (standardised units): fit | VALUE (0 = noise-free)",
          std::nullopt, "fit"),
    Value("--budget,-b", &BoArgs::budget, "total evaluations, initial design included",
          IntInRange(1, 100000), 40),
    Value("--init", &BoArgs::init,
          "initial design: sobol | lhs | uniform, optionally :N points (default "
          "max(3, d+1)); a bare N means sobol:N",
          std::nullopt, "sobol"),
    Value("--refit-every", &BoArgs::refit_every, "refit GP hyperparameters every N iterations",
          IntInRange(1, 1000000), 1),
    Value("--ts-features", &BoArgs::ts_features, "random Fourier features for --acq ts",
          IntInRange(1, 100000), 500),
    Value("--target", &BoArgs::target, "stop once the best value reaches this"),
    Value("--patience", &BoArgs::patience,
          "stop after N evaluations without improvement (0 = never)", IntInRange(0, 1000000), 0),
    Value("--on-error", &BoArgs::on_error,
          "failed evaluation: stop (end cleanly, exit 2) | continue (impute the worst "
          "value seen so far)",
          std::nullopt, "stop"),
    Value("--eval-timeout", &BoArgs::eval_timeout,
          "wall-time limit per --command evaluation in seconds (0 = none): an "
          "evaluation over it is killed with its whole process group and counts as "
          "failed (see --on-error)",
          NumberIn(0, experiment::kMaxHttpTimeout), 0),
    Value("--seed", &BoArgs::seed, "seed of the BO run", UnsignedInt(), 0),
    Value("--function-seed", &BoArgs::function_seed,
          "seed of the gp-sample function (default: --seed)", UnsignedInt()),
    Value("--lengthscale", &BoArgs::lengthscale, "SE lengthscale of gp-sample on [0,1]^d",
          NumberIn(0, 1e6, true), 0.2),
    Value("--candidates", &BoArgs::candidates,
          "finite domain: a CSV file of candidate points, one per line (d numbers; a "
          "header line is skipped); proposals maximise the acquisition over them. With "
          "--command and no --bounds, the box is their bounding box"),
    Value("--algo", &BoArgs::algo, &AlgoArgs::algo,
          "algorithm: standard (sequential, --acq) | hybrid-ei (Azimi et al. 2012: "
          "sequential EI that switches to batches while eq. 3 holds) | cl-batch "
          "(constant liar: always --batch-max points) | uhe-bo (Ha et al.: EXP3 mixes "
          "random and GP-UCB points, hyperparameters fitted on pseudo-i.i.d. data; "
          "needs --acq ucb, the paper uses --beta constant:1.96) | rm-gp-ucb (Dai 2021 "
          "Ch. 7: GP-UCB that borrows from earlier tasks' traces given by --meta and "
          "learns online how similar each one is; needs --acq ucb) | bo-bos (Dai 2021 "
          "Ch. 4: GP-UCB that early-stops training runs by Bayesian optimal stopping; "
          "--task or a --command printing one validation error per epoch) | hyperband "
          "(Li et al. 2017; --task or --command) | po-gp-ucb (Kharkovskii et al. 2020: "
          "the --candidates records are released as a random projection and GP-UCB "
          "runs on the released rows; needs --acq ucb and --po-epsilon; makes no "
          "differential-privacy claim, see docs/papers.md)",
          std::nullopt, "standard"),
    Custom<BoArgs>([](CLI::App* cmd, BoArgs* a) {
      return cmd
          ->add_option("--meta", a->algo.meta,
                       "rm-gp-ucb: earlier `advbo bo --out` traces (comma-separated) on the same "
                       "box and goal, one meta-task each; their GPs are fitted once")
          ->delimiter(',');
    }),
    Value("--po-epsilon", &BoArgs::algo, &AlgoArgs::po_epsilon,
          "po-gp-ucb: epsilon of Algorithm 1 (> 0; the threshold omega shrinks as it "
          "grows)",
          NumberIn(0, 1e6, true)),
    Value("--po-delta", &BoArgs::algo, &AlgoArgs::po_delta,
          "po-gp-ucb: delta of Algorithm 1, in (0, 1)", NumberIn(0, 1, true, true), 1e-5),
    Value("--po-r", &BoArgs::algo, &AlgoArgs::po_r,
          "po-gp-ucb: projection dimension r (0 = the largest of 5, 10, ..., 50 with "
          "omega <= sigma_min of the centred records, Sec. 3.4)",
          IntInRange(0, 10000), 0),
    Value("--po-delta-prime", &BoArgs::algo, &AlgoArgs::po_delta_prime,
          "po-gp-ucb: delta' of beta_t = 2 ln(n t^2 pi^2 / (6 delta')), in (0, 1)",
          NumberIn(0, 1, true, true), 0.025),
    Value("--po-max-norm", &BoArgs::algo, &AlgoArgs::po_max_norm,
          "po-gp-ucb: centre the records and scale them to this largest row norm first "
          "(the paper: 25; 0 = as given)",
          NumberIn(0, 1e6), 25),
    Value("--batch-max", &BoArgs::algo, &AlgoArgs::batch_max,
          "hybrid-ei / cl-batch: largest batch n_b (--command runs a batch's points at "
          "once)",
          IntInRange(1, 1000), 5),
    Value("--hybrid-eps", &BoArgs::algo, &AlgoArgs::hybrid_eps,
          "hybrid-ei: switching threshold epsilon in objective units (0 = sequential)",
          NumberIn(0, 1e6), 0.02),
    Value("--fantasy", &BoArgs::algo, &AlgoArgs::fantasy,
          "hybrid-ei / cl-batch: fantasised outcome of a batch point: mu (posterior "
          "mean) | ymax | ymax+ ((1+zeta) ymax) | ymin | random | M (known optimum)",
          std::nullopt, "mu"),
    Value("--zeta", &BoArgs::algo, &AlgoArgs::zeta, "margin of --fantasy ymax+", NumberIn(0, 1e6),
          0.1),
    Custom<BoArgs>([](CLI::App* cmd, BoArgs* a) {
      std::string tasks;
      for (const auto& n : hpo::TaskNames()) tasks += (tasks.empty() ? "" : ", ") + n;
      return cmd->add_option(
          "--task", a->tune.task,
          "HPO task to tune (minimises its validation error; the box is its search "
          "space, log10 units for log-scaled hyperparameters): " +
              tasks);
    }),
    Value("--task-data", &BoArgs::tune, &TuneArgs::task_data,
          "folder of the task's dataset (default: the shipped data/mnist, data/cifar10; "
          "fashion: /usr/share/datasets/fashion-mnist)"),
    Value("--task-examples", &BoArgs::tune, &TuneArgs::task_examples,
          "examples of the task's pool, split 80/20 train/validation (0 = all; LS-SVM "
          "2500, CNN 6000)",
          IntInRange(0, 100000000), 0),
    Value("--task-offset", &BoArgs::tune, &TuneArgs::task_offset,
          "first example of the pool (disjoint subsets for meta-tasks)", IntInRange(0, 100000000),
          0),
    Value("--task-transform", &BoArgs::tune, &TuneArgs::task_transform,
          "none | invert-noise (1 - x + noise) | grey (CIFAR-10 channel mean)", std::nullopt,
          "none"),
    Value("--task-seed", &BoArgs::tune, &TuneArgs::task_seed, "training randomness of the task",
          UnsignedInt(), 0),
    Value("--epochs", &BoArgs::tune, &TuneArgs::epochs,
          "epochs N of a full training run (0 = the task's default: 50, CNN 20; 50 for a "
          "--command; Hyperband's R "
          "defaults to 80)",
          IntInRange(0, 100000000), 0),
    Value("--epoch-budget", &BoArgs::tune, &TuneArgs::epoch_budget,
          "bo-bos / hyperband: total training epochs of the whole run", IntInRange(1, 10000000),
          1500),
    Value("--gamma", &BoArgs::tune, &TuneArgs::gamma,
          "bo-bos: K1 grows as K_{1,t} = K_{1,t-1} / gamma, in (0, 1] (thesis: 0.89, "
          "0.95, 0.99, 1)",
          NumberIn(0, 1, true), 0.95),
    Value("--kappa", &BoArgs::tune, &TuneArgs::kappa, "bo-bos: C2 factor kappa >= 1",
          NumberIn(1, 1e6), 2.0),
    Value("--warmup", &BoArgs::tune, &TuneArgs::warmup,
          "bo-bos: epochs N0 before the stopping problem", IntInRange(1, 1000000), 8),
    Value("--bos-paths", &BoArgs::tune, &TuneArgs::bos_paths, "bo-bos: forward-simulation paths",
          IntInRange(1, 10000000), 100000),
    Value("--eta", &BoArgs::tune, &TuneArgs::eta, "hyperband: successive-halving rate",
          NumberIn(1, 1e6, true), 3.0),
    Value("--out,-o", &BoArgs::out, "JSONL trace file"),
    Flag("-q,--quiet", &BoArgs::quiet, "no progress bar"),
};

std::function<int()> RegisterBoCommand(CLI::App& app) {
  auto a = std::make_shared<BoArgs>();
  CLI::App* cmd = app.add_subcommand(
      "bo",
      "Bayesian optimisation of a black-box function with a GP surrogate.\n"
      "Minimises a built-in test function (--function) or an external command (--command,\n"
      "run once per evaluation as `CMD x1 ... xd`, x also in $ADVBO_X; its last stdout line\n"
      "is y). Writes a JSONL trace (--out: config line, one line per evaluation, summary)\n"
      "and prints best x, best y and the simple regret where the optimum is known.\n"
      "Exit status: 0 done, 1 bad input, 2 stopped by a failed evaluation or nothing succeeded.");
  AddOptionTable(cmd, a.get(), kBoOptions);
  return [cmd, a]() {
    if (!cmd->parsed()) return 0;
    a->budget_given = cmd->get_option("--budget")->count() > 0;
    return RunBoCommand(*a);
  };
}

}  // namespace advbo::cli
