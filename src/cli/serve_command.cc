// `advbo serve`: puts a model (and optionally a defense) behind a small HTTP API
// (serve/server.h) so attacks, `bench` and `game` can run against it with
// --model http://HOST:PORT/predict.

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "bo/allocator.h"
#include "cli/commands.h"
#include "cli/option_table.h"
#include "cli/validators.h"
#include "defenses/game_defense.h"
#include "defenses/registry.h"
#include "experiment/setup.h"
#include "experiment/spec.h"
#include "experiment/threat_model.h"
#include "serve/server.h"
#include "text/numbers.h"

namespace advbo::cli {
namespace {

struct ServeArgs {
  std::string dataset = "mnist", model, output = "auto", normalize;
  std::string defense = "none", defender_vae, port_file;
  std::string input_shape;  // "C,H,W"; empty = probe the model
  std::optional<double> defender_eps;
  double max_body_mb = 64;
  serve::ServeOptions serve;
  int torch_threads = 0;
};

// "C,H,W" as three integers (C in 1..64, H and W in 1..4096). Throws std::invalid_argument
// naming --input-shape.
std::array<int, 3> ParseInputShape(const std::string& text) {
  const std::string bad =
      "--input-shape '" + text + "': give C,H,W with C in 1..64 and H, W in 1..4096";
  std::vector<long> v;
  try {
    v = text::ParseIntegerList(text, ',', "--input-shape");
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument(bad);
  }
  if (v.size() != 3 || v[0] < 1 || v[0] > 64 || v[1] < 1 || v[1] > 4096 || v[2] < 1 || v[2] > 4096)
    throw std::invalid_argument(bad);
  return {static_cast<int>(v[0]), static_cast<int>(v[1]), static_cast<int>(v[2])};
}

// Writes `text` to `path` atomically (a temporary file renamed into place).
void WriteAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp);
    f << text;
    if (!f) throw std::runtime_error(path + ": cannot write the port file");
  }
  std::filesystem::rename(tmp, path);
}

int RunServe(const ServeArgs& a) {
  if (!(a.max_body_mb > 0) || a.max_body_mb > 4096)
    throw std::invalid_argument("--max-body-mb must be in (0, 4096]");
  experiment::CheckLinfRadius("--defender-eps", a.defender_eps);
  if (a.torch_threads < 0 || a.torch_threads > experiment::kMaxThreads)
    throw std::invalid_argument("--torch-threads must be in 0..256");
  if (!a.port_file.empty() && std::filesystem::is_directory(a.port_file))
    throw std::invalid_argument("--port-file " + a.port_file + " is a folder");
  if (oracle::IsModelUrl(a.model))
    throw std::invalid_argument("--model must be a TorchScript file to serve, not a URL");
  bo::ConfigureAllocatorForServer();
  serve::ServeOptions opt = a.serve;
  opt.max_body_bytes = static_cast<size_t>(a.max_body_mb * (1 << 20));
  oracle::ClassifierOptions copt;
  copt.output = oracle::ParseOutputKind(a.output);
  copt.threads = a.torch_threads;
  if (!a.input_shape.empty()) {
    const auto shape = ParseInputShape(a.input_shape);
    copt.channels = shape[0];
    copt.height = shape[1];
    copt.width = shape[2];
  }
  if (!a.normalize.empty()) copt.normalize = oracle::Normalization::Parse(a.normalize);
  const std::string path = a.model.empty() ? experiment::DefaultModelPath(a.dataset) : a.model;
  auto model = oracle::Classifier::Load(path, copt);
  // The defense is set up for the model's input shape; a game defender's VAE defaults to
  // models/<dataset>_vae.pt.
  data::ImageSet shape;
  shape.channels = model->channels();
  shape.height = model->height();
  shape.width = model->width();
  std::unique_ptr<experiment::DefenseSetup> defense;
  if (a.defense != "none" && !a.defense.empty())
    defense = std::make_unique<experiment::DefenseSetup>(
        defenses::WithDefaultWindow(a.defense, defenses::kServedDefenderWindow), shape, a.dataset,
        a.defender_vae,
        a.defender_eps.value_or(experiment::DefaultRadius(a.dataset, oracle::Norm::kLinf,
                                                          experiment::RadiusUse::kStandard)
                                    .value_or(0.3)));
  serve::ModelServer server(*model, defense.get(), opt);
  const int port = server.Bind();
  std::fprintf(
      stderr,
      "advbo serve: http://%s:%d/predict  model %s (%dx%dx%d, %d classes, %s)%s%s%s\n"
      "  GET /health; POST float32 NCHW (X-Advbo-Shape: N,C,H,W), image/png or "
      "multipart PNGs; Ctrl-C stops\n",
      opt.host.c_str(), port, experiment::RecordPath(path).c_str(), model->channels(),
      model->height(), model->width(), model->num_classes(),
      model->outputs_logits() ? "logits" : "probabilities", defense ? ", defense " : "",
      defense ? defense->Spec().c_str() : "",
      model->normalization() ? (", normalize " + model->normalization()->Spec()).c_str() : "");
  if (!a.port_file.empty()) WriteAtomically(a.port_file, std::to_string(port) + "\n");
  server.ListenUntilSignal();  // Ctrl-C / SIGTERM stop it
  if (!a.port_file.empty()) std::filesystem::remove(a.port_file);
  std::fprintf(stderr, "advbo serve: stopped after %ld requests (%ld images)\n", server.requests(),
               server.images());
  return 0;
}

}  // namespace

// The options of the command, in --help order (cli/option_table.h).
const OptionRow<ServeArgs> kServeOptions[] = {
    Value("--model", &ServeArgs::model, "TorchScript classifier (default models/<dataset>_cw.pt)"),
    Value("--dataset", &ServeArgs::dataset,
          "picks the default model and game-defender VAE: mnist | cifar10",
          CLI::IsMember({"mnist", "cifar10"}), "mnist"),
    Value("--output", &ServeArgs::output, "model output: auto | logits | probs", std::nullopt,
          "auto"),
    Value("--input-shape", &ServeArgs::input_shape,
          "the model's input C,H,W (default: probed with [1,28,28], [3,32,32], "
          "[3,224,224])"),
    Value("--normalize", &ServeArgs::normalize,
          "the model expects normalised input: MEAN[,MEAN,MEAN]:STD[,STD,STD]; clients "
          "send pixels in [0,1]"),
    Custom<ServeArgs>([](CLI::App* cmd, ServeArgs* a) {
      return cmd
          ->add_option(
              "--defense", a->defense,
              defenses::DefenseHelp() +
                  "\nPer-instance when clients send session headers. A game "
                  "defender's GP keeps a window of the last 100-200 rounds unless its spec sets "
                  "window=N (window=0: the exact GP, whose cost grows with the session)")
          ->default_val("none");
    }),
    Value("--defender-vae", &ServeArgs::defender_vae,
          "VAE of a game defender (default models/<dataset>_vae.pt)"),
    Custom<ServeArgs>([](CLI::App* cmd, ServeArgs* a) {
      return cmd
          ->add_option("--defender-eps", a->defender_eps,
                       "latent game defender: L_inf clip around the attacker's image (default the "
                       "dataset's standard eps: 0.3 MNIST, 8/255 CIFAR-10)")
          ->transform(RadiusIn(1));
    }),
    Value("--host", &ServeArgs::serve, &serve::ServeOptions::host,
          "bind address (default 127.0.0.1: this machine only; 0.0.0.0 exposes it)", std::nullopt,
          "127.0.0.1"),
    Value("--port", &ServeArgs::serve, &serve::ServeOptions::port,
          "TCP port (0 = any free port; see --port-file)", CLI::Range(0, 65535), 8080),
    Value("--port-file", &ServeArgs::port_file, "write the bound port to this file once listening"),
    Value("--max-batch", &ServeArgs::serve, &serve::ServeOptions::max_batch,
          "images per request (413 beyond)", CLI::PositiveNumber, 1024),
    Value("--max-body-mb", &ServeArgs::max_body_mb, "request body limit in MiB (413 beyond)",
          NumberIn(0, 4096, true), 64),
    Value("--max-sessions", &ServeArgs::serve, &serve::ServeOptions::max_sessions,
          "per-instance defense sessions kept, oldest dropped (0 = 4096, or 16 for a "
          "game defender, which keeps a GP per session)",
          IntInRange(0, 1000000), 0),
    Value("--max-session-queries", &ServeArgs::serve, &serve::ServeOptions::max_session_queries,
          "images one defense session may send (403 beyond, not retried); bounds a game "
          "defender's history",
          IntInRange(1, 100000000), 5000),
    Value("--seed", &ServeArgs::serve, &serve::ServeOptions::seed,
          "seed of the defense for requests without a session", UnsignedInt(), 0),
    Value("--connections,--threads", &ServeArgs::serve, &serve::ServeOptions::connections,
          "connections served at once, one thread each (requests are scored one at a "
          "time; --threads is the old name)",
          IntInRange(1, serve::kMaxConnections), 64),
    Value("--read-timeout", &ServeArgs::serve, &serve::ServeOptions::read_timeout_seconds,
          "seconds to wait for each read of a request (and each write of a reply); "
          "idle keep-alive connections close after the same time",
          NumberIn(0, 3600, true), 5),
    Value("--head-timeout", &ServeArgs::serve, &serve::ServeOptions::head_timeout_seconds,
          "seconds for a request's line and headers to arrive, counted from when a "
          "thread takes the connection up or answered its last request; a slower "
          "client is cut (a client trickling its headers cannot hold a thread longer)",
          NumberIn(0, 3600, true), 10),
    Value("--body-timeout", &ServeArgs::serve, &serve::ServeOptions::body_timeout_seconds,
          "seconds for a whole request body to arrive (408 beyond)", NumberIn(0, 86400, true), 60),
    Value("--torch-threads", &ServeArgs::torch_threads, "LibTorch intra-op threads (0 = default)",
          IntInRange(0, experiment::kMaxThreads), 0),
};

std::function<int()> RegisterServeCommand(CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  auto* cmd = app.add_subcommand(
      "serve",
      "serve a model (and optionally a defense in front of it) over HTTP: GET /health, POST "
      "/predict with a float32 NCHW batch (header X-Advbo-Shape: N,C,H,W) or PNG images, "
      "scores back as JSON; attack it with --model http://HOST:PORT/predict");
  ServeArgs* a = args.get();

  AddOptionTable(cmd, a, kServeOptions);
  return [cmd, args]() { return cmd->parsed() ? RunServe(*args) : 0; };
}

}  // namespace advbo::cli
