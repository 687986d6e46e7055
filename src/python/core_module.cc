// `advbo._core`, the C++ half of the advbo Python package (pybind11): _core.run(...) runs
// any attack of advbo on images held in numpy arrays against a TorchScript file, a served
// model's URL or any Python callable, through the same experiment runner and query oracle
// as the CLI (every image scored is one query, the budget is hard, every query is clipped
// into the eps-ball). The user-facing API (advbo.attack, advbo.Attack: torch tensors,
// nn.Modules, input checks, progress) is the Python layer in src/python/advbo/.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "attacks/attack.h"
#include "data/datasets.h"
#include "experiment/evaluation.h"
#include "experiment/runner.h"
#include "experiment/setup.h"
#include "oracle/classifier.h"
#include "oracle/lockstep.h"

namespace py = pybind11;

namespace advbo::python {
namespace {

/// Where a callable back end keeps the first Python exception it saw; shared with
/// advbo.attack, which outlives the back end (the experiment owning it is gone by the time
/// the C++ exception reaches the module boundary).
struct ErrorSlot {
  std::mutex mu;
  std::exception_ptr error;
};

/// A Python callable as a score back end: f(x) with x a float32 numpy array [N, C, H, W] in
/// [0, 1] returns scores [N, classes] (anything numpy.asarray turns into a 2-D float array).
/// A Python exception raised by f is kept and re-raised unchanged by advbo.attack.
class CallableBackend : public oracle::ScoreBackend {
 public:
  CallableBackend(py::object f, std::shared_ptr<ErrorSlot> slot)
      : f_(std::move(f)), slot_(std::move(slot)) {
    py::gil_scoped_acquire gil;
    name_ = "python:" + py::str(py::getattr(f_, "__qualname__", py::type::of(f_).attr("__name__")))
                            .cast<std::string>();
  }
  ~CallableBackend() override {
    py::gil_scoped_acquire gil;
    f_ = py::object();
  }

  Eigen::MatrixXd Scores(const float* images, int n, int c, int h, int w,
                         const oracle::QueryContext*) const override {
    py::gil_scoped_acquire gil;
    try {
      py::array_t<float> x({n, c, h, w});
      std::memcpy(x.mutable_data(), images, sizeof(float) * static_cast<size_t>(n) * c * h * w);
      py::object out = f_(x);
      py::array_t<double, py::array::c_style | py::array::forcecast> s =
          py::module_::import("numpy").attr("asarray")(out, "float64");
      if (s.ndim() != 2)
        throw oracle::OutputError(name_ + ": the callable must return scores [N, classes], got " +
                                  std::to_string(s.ndim()) + "-D output");
      Eigen::MatrixXd m(s.shape(0), s.shape(1));
      auto r = s.unchecked<2>();
      for (py::ssize_t i = 0; i < s.shape(0); ++i)
        for (py::ssize_t k = 0; k < s.shape(1); ++k) m(i, k) = r(i, k);
      return m;
    } catch (py::error_already_set& e) {
      std::lock_guard<std::mutex> lock(slot_->mu);
      if (!slot_->error) slot_->error = std::current_exception();
      throw oracle::ModelError(name_ + ": the callable raised " + e.what());
    }
  }
  std::string name() const override { return name_; }
  bool thread_safe() const override { return false; }

 private:
  py::object f_;
  std::string name_;
  std::shared_ptr<ErrorSlot> slot_;
};

// Removes option `key` from `opts` and converts it to T (`fallback` when absent). A value of
// another type is a TypeError naming the option, the expected type (`what`) and the value,
// not pybind11's "Unable to cast Python instance".
template <typename T>
T Take(py::dict& opts, const char* key, T fallback, const char* what) {
  if (!opts.contains(key)) return fallback;
  py::object value = opts[key];
  PyDict_DelItemString(opts.ptr(), key);
  // bool is an int in Python; an int option given True/False is a mistake.
  const bool is_bool = py::isinstance<py::bool_>(value) ||
                       py::type::of(value).attr("__name__").cast<std::string>() == "bool_";
  // A bool option takes True / False only (not 0.0, NaN or a string that casts to true).
  if (is_bool == std::is_same_v<T, bool>) {
    try {
      return value.cast<T>();
    } catch (const py::cast_error&) {
    }
  }
  throw py::type_error("advbo.attack: " + std::string(key) + " must be " + what + ", got " +
                       py::str(py::type::of(value).attr("__name__")).cast<std::string>() + " " +
                       py::repr(value).cast<std::string>());
}

// Thrown from inside an attack when Python has a pending signal (Ctrl-C): unwinds the
// attack; advbo.attack then raises Python's KeyboardInterrupt. Not a std::exception, so no
// handler for library errors can swallow it.
struct Interrupted {};

// The images as an ImageSet (copied), checked: float array [N, C, H, W] with values in
// [0, 1]; labels [N] integers >= 0, or -1 where the model's prediction is the class.
data::ImageSet ToImageSet(const py::array& images_in, const py::array& labels_in) {
  auto images = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(images_in);
  if (!images || images.ndim() != 4)
    throw py::value_error("images must be a float array [N, C, H, W] with pixels in [0, 1]");
  auto labels = py::array_t<long, py::array::c_style | py::array::forcecast>::ensure(labels_in);
  if (!labels || labels.ndim() != 1 || labels.shape(0) != images.shape(0))
    throw py::value_error("labels must be an integer array [N] matching images [N, C, H, W]");
  data::ImageSet set;
  set.channels = static_cast<int>(images.shape(1));
  set.height = static_cast<int>(images.shape(2));
  set.width = static_cast<int>(images.shape(3));
  if (images.shape(0) < 1 || set.channels < 1 || set.height < 1 || set.width < 1)
    throw py::value_error("images must be non-empty [N, C, H, W]");
  set.pixels.assign(images.data(), images.data() + images.size());
  for (size_t i = 0; i < set.pixels.size(); ++i)
    if (!(set.pixels[i] >= 0.0f && set.pixels[i] <= 1.0f))
      throw py::value_error("images: value " + std::to_string(i) +
                            " is not a number in [0, 1] (pixels must be scaled to [0, 1])");
  for (py::ssize_t i = 0; i < labels.shape(0); ++i) {
    const long l = labels.data()[i];
    if (l < -1 || l > 1000000)
      throw py::value_error("labels must be class indices >= 0 (or -1: the model's prediction)");
    set.labels.push_back(static_cast<int>(l));
  }
  return set;
}

// The options left in `opts` after a call read its own: a TypeError naming them and the
// `accepted` ones, from `function` ("advbo.attack").
void RefuseLeftOptions(const py::dict& opts, const char* function,
                       const std::vector<std::string>& accepted) {
  if (opts.empty()) return;
  std::string keys, names;
  for (auto item : opts)
    keys += (keys.empty() ? "" : ", ") + py::str(item.first).cast<std::string>();
  for (const auto& n : accepted) names += (names.empty() ? "" : ", ") + n;
  throw py::type_error(std::string(function) + ": unknown option(s) " + keys +
                       " (accepted: " + names + ")");
}

// The options _core.run reads from its keyword arguments besides its named ones, exported as
// _core.RUN_OPTIONS (advbo/_api.py derives the options Attack passes through from it).
const std::vector<std::string>& RunOptions() {
  static const std::vector<std::string> names = {
      "target",       "dataset",       "output",  "normalize",    "defense",      "defender_eps",
      "clean_images", "indices",       "threads", "http_timeout", "http_retries", "rescale_compat",
      "pixels",       "setup_queries", "norm",    "feedback",     "lockstep",     "goal",
      "bad_queries",  "start_images",  "session"};
  return names;
}

// The experiment spec of a _core.run call: its named arguments and the options in `opts`
// (each removed as it is read; one left over is a TypeError naming it and RunOptions()).
experiment::ExperimentSpec SpecOfOptions(const std::string& attack, std::optional<double> eps,
                                         long budget, bool targeted, uint64_t seed, py::dict& opts,
                                         std::optional<std::string>* dataset) {
  experiment::ExperimentSpec spec;
  spec.attacks = experiment::SplitAttackList(attack);
  spec.eps = eps;
  spec.option_names = experiment::OptionNames::Python();
  spec.budget = budget;
  spec.seed = seed;
  spec.untargeted = !targeted;
  if (opts.contains("target")) {
    if (!targeted) throw py::value_error("target= needs targeted=True");
    spec.target = Take<int>(opts, "target", 0, "a class index (int)");
  }
  spec.output = Take<std::string>(opts, "output", "auto", "a string");
  spec.normalize = Take<std::string>(opts, "normalize", "", "a string");
  spec.defense = Take<std::string>(opts, "defense", "none", "a string");
  spec.defender_eps =
      Take<std::optional<double>>(opts, "defender_eps", std::nullopt, "a number or None");
  spec.clean_images = Take<int>(opts, "clean_images", 0, "an int");
  spec.http_timeout = Take<double>(opts, "http_timeout", 30, "a number of seconds");
  spec.http_retries = Take<int>(opts, "http_retries", 3, "an int");
  spec.session = Take<std::string>(opts, "session", "", "a session name (str)");
  spec.threads = Take<int>(opts, "threads", 0, "an int");
  spec.lockstep = Take<int>(opts, "lockstep", 0, "an int (0 = auto)");
  spec.indices = Take<std::vector<int>>(opts, "indices", {}, "a list of image indices (ints)");
  spec.rescale_compat = Take<bool>(opts, "rescale_compat", false, "True or False");
  spec.pixels = Take<std::string>(opts, "pixels", "8bit", "'8bit' or 'float'");
  spec.setup_queries = Take<bool>(opts, "setup_queries", true, "True or False");
  spec.norm = Take<std::string>(opts, "norm", "linf", "'linf' or 'l2'");
  spec.feedback = Take<std::string>(opts, "feedback", "scores", "'scores' or 'label'");
  spec.goal = Take<std::string>(opts, "goal", "success", "'success' or 'min-distance'");
  spec.bad_queries = Take<bool>(opts, "bad_queries", true, "True or False");
  spec.start_images =
      Take<std::string>(opts, "start_images", "", "a folder path (class sub-folders 0/, 1/, ...)");
  *dataset =
      Take<std::optional<std::string>>(opts, "dataset", std::nullopt, "'mnist', 'cifar10' or None");
  RefuseLeftOptions(opts, "advbo.attack", RunOptions());
  if (*dataset && **dataset != "mnist" && **dataset != "cifar10")
    throw py::value_error("dataset must be 'mnist', 'cifar10' or None");
  return spec;
}

// The classifier behind `model` (a path or URL, or a callable whose exceptions land in
// `slot`) for images [N, c, h, w] as `spec` says (output kind, threads, normalisation,
// probe or not, HTTP options). A file or a callable scores in `lockstep`'s lanes (
// the callable then receives the batches of B instances); a URL one session at a time.
std::unique_ptr<oracle::Classifier> LoadModel(py::object model,
                                              const experiment::ExperimentSpec& spec,
                                              const data::ImageSet& set,
                                              const std::shared_ptr<ErrorSlot>& slot,
                                              std::shared_ptr<oracle::Lockstep>* lockstep) {
  oracle::ClassifierOptions copt;
  copt.output = oracle::ParseOutputKind(spec.output);
  copt.channels = set.channels;
  copt.height = set.height;
  copt.width = set.width;
  copt.threads = spec.threads;
  // setup_queries=False: no probe batch (the output kind must be given; the class count
  // comes with the first answer).
  copt.probe = spec.setup_queries;
  if (!spec.setup_queries && spec.output == "auto")
    throw py::value_error(
        "setup_queries=False needs output='logits' or output='probs' (detecting the output "
        "kind scores two probe images)");
  if (!spec.normalize.empty()) copt.normalize = oracle::Normalization::Parse(spec.normalize);
  copt.http = {spec.http_timeout, spec.http_retries};
  if (py::isinstance<py::str>(model) || py::hasattr(model, "__fspath__")) {
    const std::string path = py::str(py::module_::import("os").attr("fspath")(model));
    if (!oracle::IsModelUrl(path))
      copt.lockstep = *lockstep = std::make_shared<oracle::Lockstep>(1);
    py::gil_scoped_release nogil;
    return oracle::Classifier::Load(path, copt);
  }
  if (PyCallable_Check(model.ptr())) {
    *lockstep = std::make_shared<oracle::Lockstep>(1);
    auto backend =
        oracle::MakeLockstepBackend(std::make_unique<CallableBackend>(model, slot), *lockstep);
    py::gil_scoped_release nogil;
    return oracle::Classifier::FromBackend(std::move(backend), copt);
  }
  throw py::type_error(
      "model must be a TorchScript path, an http:// URL, or a callable taking float32 "
      "[N, C, H, W] in [0, 1] and returning scores [N, classes]");
}

// What a run produced, for the result dict.
struct RunOutput {
  py::list records;
  std::vector<std::vector<float>> adversarial;
  std::vector<std::vector<float>> closest;  // label feedback: the closest adversarial query
  std::string pixels_note, model_output;
  std::vector<int> skipped;
  int num_classes = 0;
  long zero_rows = 0;
};

// Runs every instance x attack of `ex` (called without the GIL; `loads` is json.loads),
// appending records and images to *out and calling progress(done, total, record) after each,
// in job order. With ex.lockstep() B > 1 the jobs run in B lanes (Experiment::RunJobs) and the
// model -- a callable too -- receives each round's images as one batch.
// Ctrl-C: Python only notices a signal when it runs in the main thread, and the attack runs
// without the GIL; so every 50 ms the main thread checks its signals -- between answered batches
// when it runs the jobs itself, or while it waits for the lanes -- and a KeyboardInterrupt
// unwinds the attack (the lanes stop at their next batch).
void RunJobs(const experiment::Experiment& ex, const py::object& progress, const py::object& loads,
             RunOutput* out) {
  const auto main_thread = std::this_thread::get_id();
  std::atomic<bool> interrupted{false};
  std::mutex check_mu;
  auto last_check = std::chrono::steady_clock::now();
  // True when Python has a pending signal (checked at most every 50 ms, main thread only).
  auto signalled = [&] {
    std::lock_guard<std::mutex> lock(check_mu);
    const auto now = std::chrono::steady_clock::now();
    if (now - last_check < std::chrono::milliseconds(50)) return false;
    last_check = now;
    py::gil_scoped_acquire gil;
    return PyErr_CheckSignals() != 0;
  };
  experiment::JobHooks hooks;
  hooks.on_batch = [&](const oracle::QueryResult&, long, const defenses::GameDefense*) {
    if (interrupted || (std::this_thread::get_id() == main_thread && signalled())) {
      interrupted = true;
      throw Interrupted{};
    }
  };
  const size_t attacks = ex.num_attacks(), total = ex.instances().size() * attacks;
  auto job = [&](size_t k) -> oracle::Lockstep::Commit {
    auto done =
        std::make_shared<experiment::JobResult>(ex.Run(k / attacks, k % attacks, nullptr, hooks));
    return [&, done] {
      py::gil_scoped_acquire gil;
      out->records.append(loads(done->record.dump()));
      out->adversarial.push_back(std::move(done->result.adversarial));
      out->closest.push_back(std::move(done->result.closest_adversarial));
      // progress(done, total, record): the Python layer's verbose= / callback=; an
      // exception it raises stops the run and reaches the caller unchanged.
      if (!progress.is_none())
        progress(out->records.size(), total, out->records[out->records.size() - 1]);
    };
  };
  if (ex.lockstep() == 1) return ex.RunJobs(total, job);
  std::exception_ptr error;
  std::atomic<bool> finished{false};
  std::thread lanes([&] {
    try {
      ex.RunJobs(total, job);
    } catch (...) {
      error = std::current_exception();
    }
    finished = true;
  });
  while (!finished) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!interrupted && signalled()) interrupted = true;  // the KeyboardInterrupt stays set
  }
  lanes.join();
  if (interrupted) throw Interrupted{};
  if (error) std::rethrow_exception(error);
}

py::dict Run(py::object model, py::array images, py::array labels, const std::string& attack,
             std::optional<double> eps, long budget, bool targeted, uint64_t seed,
             py::object progress, py::kwargs kwargs) {
  py::dict opts(kwargs);
  std::optional<std::string> dataset;
  experiment::ExperimentSpec spec =
      SpecOfOptions(attack, eps, budget, targeted, seed, opts, &dataset);
  data::ImageSet set = ToImageSet(images, labels);
  spec.num_images = static_cast<int>(set.size());
  // The paper defaults of a shipped dataset apply when asked for (dataset="mnist" /
  // "cifar10"); otherwise the data are "custom" (named "python" in records).
  spec.dataset = dataset ? *dataset : (set.channels == 3 ? "cifar10" : "mnist");  // eps default
  const std::string data_name = dataset ? *dataset : "python";
  const int c = set.channels, h = set.height, w = set.width;
  auto slot = std::make_shared<ErrorSlot>();
  RunOutput out;
  const py::object loads = py::module_::import("json").attr("loads");
  try {
    std::shared_ptr<oracle::Lockstep> lockstep;
    std::unique_ptr<oracle::Classifier> clf = LoadModel(model, spec, set, slot, &lockstep);
    py::gil_scoped_release nogil;
    const experiment::Experiment ex(spec, std::move(set), std::move(clf), data_name, lockstep);
    out.pixels_note = ex.pixels_note();
    out.skipped = ex.selection().skipped;
    RunJobs(ex, progress, loads, &out);
    out.num_classes = ex.model().num_classes();  // known by now without setup queries too
    out.model_output = ex.model().output_format();
    out.zero_rows = ex.model().zero_probability_rows();
  } catch (py::error_already_set&) {
    throw;  // the progress callback's own exception
  } catch (const Interrupted&) {
    throw py::error_already_set();  // the KeyboardInterrupt PyErr_CheckSignals raised
  } catch (const oracle::ModelError&) {
    std::exception_ptr e;
    {
      std::lock_guard<std::mutex> lock(slot->mu);
      std::swap(e, slot->error);
    }
    if (e) std::rethrow_exception(e);  // the callable's own exception, unchanged
    throw;
  }
  py::array_t<float> adv({static_cast<py::ssize_t>(out.adversarial.size()),
                          static_cast<py::ssize_t>(c), static_cast<py::ssize_t>(h),
                          static_cast<py::ssize_t>(w)});
  float* p = adv.mutable_data();
  for (const auto& a : out.adversarial) p = std::copy(a.begin(), a.end(), p);
  // The closest adversarial query of each label-feedback instance (None where there is none).
  py::list closest;
  for (const auto& a : out.closest) {
    if (a.empty()) {
      closest.append(py::none());
      continue;
    }
    py::array_t<float> img(
        {static_cast<py::ssize_t>(c), static_cast<py::ssize_t>(h), static_cast<py::ssize_t>(w)});
    std::copy(a.begin(), a.end(), img.mutable_data());
    closest.append(img);
  }
  py::dict result;
  result["records"] = out.records;
  result["adversarial"] = adv;
  result["closest_adversarial"] = closest;
  result["num_classes"] = out.num_classes;
  result["skipped"] = out.skipped;
  result["pixels_note"] = out.pixels_note;
  result["model_output"] = out.model_output;
  result["zero_probability_rows"] = out.zero_rows;
  return result;
}

// The options _core.evaluate reads from its keyword arguments, exported as
// _core.EVALUATE_OPTIONS (advbo.evaluate passes them through).
const std::vector<std::string>& EvaluateOptions() {
  static const std::vector<std::string> names = {"dataset",
                                                 "data",
                                                 "indices",
                                                 "num_images",
                                                 "eps",
                                                 "norm",
                                                 "feedback",
                                                 "pixels",
                                                 "budget",
                                                 "seed",
                                                 "defense",
                                                 "ensemble",
                                                 "adaptive",
                                                 "split",
                                                 "reference",
                                                 "reference_only",
                                                 "reference_steps",
                                                 "reference_restarts",
                                                 "reference_targets",
                                                 "verify_draws",
                                                 "threads",
                                                 "normalize",
                                                 "output",
                                                 "save_images",
                                                 "shard"};
  return names;
}

// advbo.evaluate: experiment::Evaluate on a model file or URL (the white-box reference needs
// the file), with the options in `kwargs` (EvaluateOptions; one left over is a TypeError).
// Runs without the GIL; the banner and notes come back as "notes".
py::dict EvaluateModel(const std::string& model, const std::string& out, py::kwargs kwargs) {
  py::dict opts(kwargs);
  experiment::EvaluationOptions o;
  experiment::ExperimentSpec& spec = o.spec;
  spec.model = model;
  spec.option_names = experiment::OptionNames::Python();
  o.out_dir = out;
  spec.dataset = Take<std::string>(opts, "dataset", "mnist", "'mnist' or 'cifar10'");
  spec.data = Take<std::string>(opts, "data", "", "a file or folder path");
  spec.indices = Take<std::vector<int>>(opts, "indices", {}, "a list of image indices (ints)");
  spec.num_images = Take<std::optional<int>>(opts, "num_images", std::nullopt, "an int or None");
  spec.eps = Take<std::optional<double>>(opts, "eps", std::nullopt, "a number or None");
  spec.norm = Take<std::string>(opts, "norm", "linf", "'linf' or 'l2'");
  spec.feedback = Take<std::string>(opts, "feedback", "scores", "'scores' or 'label'");
  spec.pixels = Take<std::string>(opts, "pixels", "8bit", "'8bit' or 'float'");
  spec.budget = Take<long>(opts, "budget", spec.budget, "an int (model queries per image)");
  spec.seed = Take<uint64_t>(opts, "seed", 0, "an int >= 0");
  spec.defense = Take<std::string>(opts, "defense", "none", "a defense spec (str)");
  spec.verify_draws = Take<int>(opts, "verify_draws", spec.verify_draws, "an int");
  spec.threads = Take<int>(opts, "threads", 0, "an int");
  spec.normalize = Take<std::string>(opts, "normalize", "", "a string");
  spec.output = Take<std::string>(opts, "output", "auto", "a string");
  o.ensemble = Take<std::string>(opts, "ensemble", "", "a comma list of attack specs (str)");
  o.no_adaptive = !Take<bool>(opts, "adaptive", true, "True or False");
  o.split = Take<std::string>(opts, "split", "", "a comma list of weights (str)");
  o.reference =
      Take<std::string>(opts, "reference", "auto", "'auto', 'apgd', 'standard' or 'none'");
  o.reference_only = Take<bool>(opts, "reference_only", false, "True or False");
  o.apgd.iterations = Take<int>(opts, "reference_steps", o.apgd.iterations, "an int");
  o.apgd.restarts = Take<int>(opts, "reference_restarts", o.apgd.restarts, "an int");
  o.apgd.target_classes = Take<int>(opts, "reference_targets", o.apgd.target_classes, "an int");
  o.save_images = Take<std::string>(opts, "save_images", "", "a folder path");
  const auto shard = Take<std::vector<int>>(opts, "shard", {1, 1}, "a pair [k, n]");
  if (shard.size() != 2) throw py::value_error("shard must be a pair [k, n] with 1 <= k <= n");
  o.shard_k = shard[0];
  o.shard_n = shard[1];
  RefuseLeftOptions(opts, "advbo.evaluate", EvaluateOptions());
  std::vector<std::string> notes;
  experiment::EvaluationResult r;
  {
    py::gil_scoped_release nogil;
    experiment::EvaluationHooks hooks;
    hooks.note = [&](const std::string& line, bool) { notes.push_back(line); };
    r = experiment::Evaluate(o, hooks);
  }
  py::dict result;
  result["summary"] = py::module_::import("json").attr("loads")(r.summary.dump());
  result["table"] = r.table;
  result["records"] = r.records;
  result["status"] = r.status;
  result["notes"] = notes;
  return result;
}

// advbo.load_images: the shipped sample of a dataset or the user's own data, as the CLI's
// --dataset / --data read them.
py::tuple LoadImages(const std::string& dataset, const std::string& data, const std::string& format,
                     std::optional<size_t> limit) {
  data::ImageSet set;
  {
    py::gil_scoped_release nogil;
    set = experiment::LoadImages(dataset, data, format);
  }
  const size_t n = limit ? std::min(*limit, set.size()) : set.size();
  py::array_t<float> x({static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(set.channels),
                        static_cast<py::ssize_t>(set.height), static_cast<py::ssize_t>(set.width)});
  std::copy(set.pixels.begin(), set.pixels.begin() + n * set.image_size(), x.mutable_data());
  py::array_t<int64_t> y(static_cast<py::ssize_t>(n));
  for (size_t i = 0; i < n; ++i) y.mutable_data()[i] = set.labels[i];
  return py::make_tuple(x, y);
}

// `message` with every CLI flag that is one of advbo.attack's keyword arguments ("--eps",
// "--defender-eps", "--budget", ...) written as that keyword ("eps", "defender_eps"): the core
// validates the options, and a Python user is told the names they typed.
std::string WithKeywordNames(const std::string& message) {
  std::set<std::string> keywords(RunOptions().begin(), RunOptions().end());
  for (const char* k : {"eps", "budget", "seed", "targeted", "attack"}) keywords.insert(k);
  std::string out;
  size_t i = 0;
  while (i < message.size()) {
    const bool flag = message.compare(i, 2, "--") == 0 && i + 2 < message.size() &&
                      std::islower(static_cast<unsigned char>(message[i + 2]));
    if (!flag) {
      out += message[i++];
      continue;
    }
    size_t j = i + 2;
    std::string name;
    while (j < message.size() &&
           (std::islower(static_cast<unsigned char>(message[j])) ||
            std::isdigit(static_cast<unsigned char>(message[j])) || message[j] == '-'))
      name += message[j] == '-' ? '_' : message[j], ++j;
    out += keywords.count(name) ? name : message.substr(i, j - i);
    i = j;
  }
  return out;
}

}  // namespace
}  // namespace advbo::python

PYBIND11_MODULE(_core, m) {
  m.doc() =
      "The C++ half of the advbo package: the experiment runner behind advbo.attack. Use the "
      "advbo module's API (advbo.attack, advbo.Attack), which checks and converts its input.";
  py::register_exception<advbo::oracle::ModelError>(m, "ModelError", PyExc_RuntimeError);
  py::register_exception<advbo::data::DataError>(m, "DataError", PyExc_RuntimeError);
  // The core's input errors name CLI flags; Python users get their keyword arguments' names.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const std::invalid_argument& e) {
      PyErr_SetString(PyExc_ValueError, advbo::python::WithKeywordNames(e.what()).c_str());
    }
  });
  m.attr("kMaxBudget") = advbo::experiment::kMaxBudget;
  m.attr("RUN_OPTIONS") = py::tuple(py::cast(advbo::python::RunOptions()));
  m.attr("EVALUATE_OPTIONS") = py::tuple(py::cast(advbo::python::EvaluateOptions()));
  // The one table of default budgets (experiment/threat_model.h), model queries.
  m.attr("DEFAULT_BUDGET_ATTACK") =
      advbo::experiment::DefaultBudget(advbo::experiment::BudgetUse::kAttack);
  m.attr("DEFAULT_BUDGET_EVALUATE") =
      advbo::experiment::DefaultBudget(advbo::experiment::BudgetUse::kEvaluate);
  // The attack registry's names (attacks/registry.h), exported as advbo.ATTACKS.
  m.attr("ATTACKS") = py::tuple(py::cast(advbo::attacks::AttackNames()));
  m.attr("__version__") = ADVBO_VERSION;
  m.def(
      "repo_root", [] { return advbo::experiment::RepoRoot().string(); },
      "The advbo source tree this module was built from (its data/ and models/).");
  m.def("load_images", &advbo::python::LoadImages, py::arg("dataset") = "mnist",
        py::arg("data") = "", py::arg("format") = "auto", py::arg("limit") = py::none(),
        R"doc(Images and labels as advbo's CLI reads them (see advbo.load_images).

Returns (images float32 [N, C, H, W] in [0, 1], labels int64 [N], -1 where unknown). Raises
advbo.DataError naming the file.)doc");
  m.def("run", &advbo::python::Run, py::arg("model"), py::arg("images"), py::arg("labels"),
        py::arg("attack") = "bos2", py::arg("eps") = py::none(),
        py::arg("budget") = advbo::experiment::DefaultBudget(advbo::experiment::BudgetUse::kAttack),
        py::arg("targeted") = true, py::arg("seed") = 0, py::arg("progress") = py::none(),
        R"doc(Runs attacks on images through advbo's experiment runner (see advbo.attack).

model     a TorchScript file path, a served model's URL, or a callable f(x) taking float32
          numpy x [N, C, H, W] in [0, 1] and returning scores [N, classes].
images    float32 [N, C, H, W] in [0, 1]; labels int [N] (-1: the model's prediction).
progress  None or f(done, total, record) called after every finished instance.
options   target, dataset, output, normalize, defense, defender_eps, clean_images, indices, setup_queries,
          threads, http_timeout, http_retries, rescale_compat, pixels (as the CLI's options).

Only correctly classified images are attacked. Returns a dict: records (one dict per image x
goal x attack, the CLI's record fields), adversarial (float32 [len(records), C, H, W]; the
clean image for a failed hard-label instance), closest_adversarial (per record: the closest
adversarial query of a hard-label instance, float32 [C, H, W], or None), num_classes, skipped (indices of misclassified images), pixels_note ("" or a note on the
query space), model_output ("logits", "log_probabilities" or "probabilities") and
zero_probability_rows (answers holding an exact-zero probability). Raises ValueError / TypeError on bad arguments, ModelError on a model that
fails, and re-raises the callable's own exception.)doc");
  m.def("evaluate", &advbo::python::EvaluateModel, py::arg("model"), py::arg("out"),
        R"doc(Robust accuracy over an ensemble of black-box attacks (see advbo.evaluate).

model  a TorchScript file path or a served model's URL; out  the output folder.
options  EVALUATE_OPTIONS, as advbo evaluate's flags. Returns a dict: summary (summary.json's
content), table (table.txt's), records (the record file), status (0, or 3 when images were
not evaluated) and notes (the run's banner and notes). Raises ValueError / TypeError on bad
arguments, ModelError / DataError naming the file.)doc");
}
