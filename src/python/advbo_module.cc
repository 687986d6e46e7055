// The `advbo` Python module (pybind11): advbo.attack(...) runs any attack of advbo on
// images held in numpy arrays against a TorchScript file, a served model's URL or any
// Python callable, through the same experiment runner and query oracle as the CLI (every
// image scored is one query, the budget is hard, every query is clipped into the eps-ball).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "attacks/attack.h"
#include "data/datasets.h"
#include "experiment/runner.h"
#include "experiment/setup.h"
#include "oracle/classifier.h"

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
  const bool is_bool = py::isinstance<py::bool_>(value);
  if (!(is_bool && !std::is_same_v<T, bool>)) {
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
// [0, 1]; labels [N] integers.
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
    if (l < 0 || l > 1000000) throw py::value_error("labels must be class indices >= 0");
    set.labels.push_back(static_cast<int>(l));
  }
  return set;
}

py::tuple Attack(py::object model, py::array images, py::array labels, const std::string& attack,
                 std::optional<double> eps, long budget, bool targeted, uint64_t seed,
                 py::kwargs kwargs) {
  py::dict opts(kwargs);
  experiment::ExperimentSpec spec;
  spec.attacks = experiment::SplitAttackList(attack);
  spec.eps = eps;
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
  spec.threads = Take<int>(opts, "threads", 0, "an int");
  spec.indices = Take<std::vector<int>>(opts, "indices", {}, "a list of image indices (ints)");
  const bool rescale = Take<bool>(opts, "rescale_compat", false, "True or False");
  spec.rescale_compat = rescale;
  spec.pixels = Take<std::string>(opts, "pixels", "8bit", "'8bit' or 'float'");
  std::optional<std::string> dataset =
      Take<std::optional<std::string>>(opts, "dataset", std::nullopt, "'mnist', 'cifar10' or None");
  if (!opts.empty()) {
    std::string keys;
    for (auto item : opts)
      keys += (keys.empty() ? "" : ", ") + py::str(item.first).cast<std::string>();
    throw py::type_error(
        "advbo.attack: unknown option(s) " + keys +
        " (accepted: target, dataset, output, normalize, defense, defender_eps, clean_images, "
        "indices, threads, http_timeout, http_retries, rescale_compat, pixels)");
  }
  data::ImageSet set = ToImageSet(images, labels);
  spec.num_images = static_cast<int>(set.size());
  // The paper defaults of a shipped dataset apply when asked for (dataset="mnist" /
  // "cifar10"); otherwise the data are "custom" (named "python" in records).
  if (dataset) {
    if (*dataset != "mnist" && *dataset != "cifar10")
      throw py::value_error("dataset must be 'mnist', 'cifar10' or None");
    spec.dataset = *dataset;
  } else {
    spec.dataset = set.channels == 3 ? "cifar10" : "mnist";  // eps default only
  }
  const std::string data_name = dataset ? *dataset : "python";

  oracle::ClassifierOptions copt;
  copt.output = oracle::ParseOutputKind(spec.output);
  copt.channels = set.channels;
  copt.height = set.height;
  copt.width = set.width;
  copt.threads = spec.threads;
  if (!spec.normalize.empty()) copt.normalize = oracle::Normalization::Parse(spec.normalize);
  copt.http = {spec.http_timeout, spec.http_retries};
  auto slot = std::make_shared<ErrorSlot>();
  std::unique_ptr<oracle::Classifier> clf;
  std::vector<nlohmann::json> records;
  std::vector<std::vector<float>> adversarial;
  std::string pixels_note;
  try {
    if (py::isinstance<py::str>(model) || py::hasattr(model, "__fspath__")) {
      const std::string path = py::str(py::module_::import("os").attr("fspath")(model));
      py::gil_scoped_release nogil;
      clf = oracle::Classifier::Load(path, copt);
    } else if (PyCallable_Check(model.ptr())) {
      auto backend = std::make_unique<CallableBackend>(model, slot);
      py::gil_scoped_release nogil;
      clf = oracle::Classifier::FromBackend(std::move(backend), copt);
    } else {
      throw py::type_error(
          "model must be a TorchScript path, an http:// URL, or a callable taking float32 "
          "[N, C, H, W] in [0, 1] and returning scores [N, classes]");
    }
    py::gil_scoped_release nogil;
    const experiment::Experiment ex(spec, std::move(set), std::move(clf), data_name);
    pixels_note = ex.pixels_note();
    // Ctrl-C: Python only notices a signal when it runs, and the attack runs without the
    // GIL; so after answered batches (at most every 50 ms) let Python check its signals.
    experiment::JobHooks hooks;
    auto last_check = std::chrono::steady_clock::now();
    hooks.on_batch = [&last_check](const oracle::QueryResult&, long, const defenses::GameDefense*) {
      const auto now = std::chrono::steady_clock::now();
      if (now - last_check < std::chrono::milliseconds(50)) return;
      last_check = now;
      py::gil_scoped_acquire gil;
      if (PyErr_CheckSignals() != 0) throw Interrupted{};
    };
    for (size_t i = 0; i < ex.instances().size(); ++i)
      for (size_t j = 0; j < ex.num_attacks(); ++j) {
        experiment::JobResult job = ex.Run(i, j, nullptr, hooks);
        records.push_back(std::move(job.record));
        adversarial.push_back(std::move(job.result.adversarial));
      }
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
  if (!pixels_note.empty() && PyErr_WarnEx(PyExc_UserWarning, pixels_note.c_str(), 1) != 0)
    throw py::error_already_set();
  py::object loads = py::module_::import("json").attr("loads");
  py::list out;
  for (const auto& r : records) out.append(loads(r.dump()));
  const int c = set.channels, h = set.height, w = set.width;
  py::array_t<float> adv({static_cast<py::ssize_t>(adversarial.size()), static_cast<py::ssize_t>(c),
                          static_cast<py::ssize_t>(h), static_cast<py::ssize_t>(w)});
  float* p = adv.mutable_data();
  for (const auto& a : adversarial) p = std::copy(a.begin(), a.end(), p);
  return py::make_tuple(out, adv);
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

}  // namespace
}  // namespace advbo::python

PYBIND11_MODULE(advbo, m) {
  m.doc() =
      "advbo: black-box adversarial attacks driven by Bayesian optimisation (BOS^2, Square, "
      "Parsimonious, ...) on any scores-only model: a TorchScript file, a served model's URL "
      "(advbo serve) or a Python callable.";
  py::register_exception<advbo::oracle::ModelError>(m, "ModelError", PyExc_RuntimeError);
  py::register_exception<advbo::data::DataError>(m, "DataError", PyExc_RuntimeError);
  m.def("load_images", &advbo::python::LoadImages, py::arg("dataset") = "mnist",
        py::arg("data") = "", py::arg("format") = "auto", py::arg("limit") = py::none(),
        R"doc(Images and labels as advbo's CLI reads them.

dataset   "mnist" | "cifar10": the shipped sample in data/ (when data is empty).
data      your own data instead: an MNIST IDX images file (labels beside it), a CIFAR-10 .bin
          batch, or an image file / folder (folder/<label>/*.png); format auto|mnist|cifar10|images.
limit     keep the first `limit` images.
Returns (images float32 [N, C, H, W] in [0, 1], labels int64 [N], -1 where unknown). Raises
advbo.DataError naming the file.)doc");
  m.def("attack", &advbo::python::Attack, py::arg("model"), py::arg("images"), py::arg("labels"),
        py::arg("attack") = "bos2", py::arg("eps") = py::none(), py::arg("budget") = 900,
        py::arg("targeted") = true, py::arg("seed") = 0,
        R"doc(Attack images with one or more black-box attacks.

model     a TorchScript file path, a served model's URL (http://HOST:PORT/predict), or a
          callable f(x) taking float32 x [N, C, H, W] in [0, 1] and returning scores
          [N, classes] (logits or probabilities; detected, see output=).
images    float array [N, C, H, W], pixels in [0, 1]; labels: int array [N].
attack    attack spec(s) as on the CLI: "bos2", "square", "bos2:kernel=matern52,square".
eps       L_inf radius in (0, 1] (default 0.3 for 1-channel, 0.05 for 3-channel images).
budget    queries per instance (every image the model scores is one query; hard limit).
targeted  True: every other class (or target=K); False: untargeted.
seed      run seed; the same seed gives the same records as `advbo attack`.
options   target=K, dataset="mnist"|"cifar10" (the paper defaults of that dataset; records
          then equal the CLI's on the shipped data), output="auto"|"logits"|"probs",
          normalize="MEAN:STD", defense="jpeg:quality=75" | "r2b2:jpeg+noise" | ...,
          defender_eps, indices=[...], threads, http_timeout, http_retries, rescale_compat,
          pixels="8bit" (default: every query on the 1/255 grid inside the ball, so each
          success is an image that survives saving as PNG; images off the grid fall back to
          "float" with a warning) | "float" (the papers' setting).

Only correctly classified images are attacked. Returns (records, adversarial): one dict per
(image, goal, attack) with the CLI's record fields (success, queries, linf, ...) and a
float32 array [len(records), C, H, W] of the reported images. Raises ValueError / TypeError on
bad arguments, advbo.ModelError on a model that fails, and re-raises the callable's own
exception when it raises.)doc");
}
