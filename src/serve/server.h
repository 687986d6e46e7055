// `advbo serve`: a model (and optionally a defense in front of it) behind a small HTTP API,
// so that every attack, `bench` and `game` can run against a served model exactly as
// against a local file (docs/design.md, "Served models"). HTTP is cpp-httplib's.
//
// Endpoints
//   GET  /health   200 {"status": "ok", "model", "input": [C, H, W], "classes", "output":
//                  "logits" | "probabilities", "defense", "normalize", "max_batch",
//                  "max_body_bytes", "requests", "images"}
//   POST /predict  a batch of images, one of
//                  * Content-Type application/octet-stream with header X-Advbo-Shape:
//                    N,C,H,W; body N*C*H*W little-endian float32 in NCHW order, pixels in
//                    [0, 1] (the wire format of oracle/http_backend.h)
//                  * Content-Type image/png: one PNG image (8-bit grey or RGB)
//                  * multipart/form-data: one PNG per file part, in order
//                  200 {"scores": [[...] | null, ...], "classes": K, "detected": [...]?,
//                  "refused": [...]?}: the model's raw output rows (logits or
//                  probabilities as the model gives them; doubles printed to round-trip);
//                  "detected" when a stateful detector watches the request; "refused" when
//                  it rejects (blacklight:action=reject): a refused image's row is null, never
//                  numbers a client could read as scores, and the header X-Advbo-Refused
//                  counts them. A refused image still counts as a query.
//                  4xx {"error": "..."}: malformed request (wrong shape, size, values outside
//                  [0, 1], too large, bad session headers, 408 a body too slow, 403 a
//                  session past --max-session-queries); nothing evaluated
//
// A defense (--defense) transforms every image before the model. Requests that carry the
// session headers of oracle::QueryContext (X-Advbo-Session, -Defense-Seed, -True-Class,
// -Target) get a per-session defense, created on the session's first request exactly as a
// local --defense is for one attack instance (DefenseSetup::ForInstance with that seed) and
// paid with that instance's objective; so a served defended model gives the same records as
// a local --defense. X-Advbo-Purpose (oracle::QueryPurposeName) says what the images are
// for: a run's setup queries (shape_probe, selection, clean_accuracy) are answered as a
// local run scores them -- the probe by the model alone, selection and clean accuracy
// through the defense's input stages seeded by the session's seed -- and are never seen by
// the detector or the defender (never refused as repeats, never learnt from). The server
// trusts these headers: it reproduces a local --defense for experiments and is no security
// boundary. Requests without a session share one defense seeded by the server's seed (what
// a public API's defense would do; a game defender then never gets feedback).
// Requests are answered one at a time (deterministic defense state).
//
// Limits (docs/design.md, "Validation and output safety"): bodies are read through
// httplib's content reader, so a bogus or too large Content-Length is answered at once and
// chunked or compressed bodies are counted after decoding and cut at --max-body-mb;
// encoded images are checked against the model's size from their header before decoding;
// every socket read waits at most --read-timeout, a request head at most --head-timeout and
// a whole body at most --body-timeout. Each open connection holds one of --connections
// threads while it sends a request, so clients that trickle their heads hold them for
// --head-timeout at most; a server exposed beyond loopback should still sit behind a reverse
// proxy (more than --connections clients at once queue behind each other).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "experiment/setup.h"
#include "oracle/classifier.h"

namespace advbo::serve {

/// Server options (defaults are `advbo serve`'s).
struct ServeOptions {
  std::string host = "127.0.0.1";     ///< bind address; 0.0.0.0 exposes the model
  int port = 8080;                    ///< 0 = any free port (see ModelServer::port())
  int max_batch = 1024;               ///< images per request, >= 1
  size_t max_body_bytes = 64u << 20;  ///< request body limit (413 beyond), >= 1
  int max_sessions = 0;               ///< defense sessions kept (oldest dropped), >= 1;
                                      ///< 0 = kDefaultSessions, or kDefaultGameSessions
                                      ///< for a game defender (each keeps a GP)
  long max_session_queries = 5000;    ///< images one session may send (403 beyond), >= 1;
                                      ///< bounds a game defender's GP (its history)
  uint64_t seed = 0;                  ///< seed of the session-less defense
  int connections = 64;               ///< connection threads, 1..kMaxConnections
  double read_timeout_seconds = 5;    ///< wait per socket read or write, (0, 3600]
  double body_timeout_seconds = 60;   ///< a whole request body, (0, 86400]
  /// A request head (request line and headers), from when a thread takes the connection up
  /// or answered its last request, (0, 3600]; a later head gets the connection cut.
  double head_timeout_seconds = 10;
  /// Every field in its documented range; throws std::invalid_argument naming the option.
  void Validate() const;
};

/// Sessions kept by default with a fixed defense, and with a game defender (whose GP
/// grows with its session's queries: at most kDefaultGameSessions GPs are alive).
inline constexpr int kDefaultSessions = 4096;
inline constexpr int kDefaultGameSessions = 16;
/// Largest ServeOptions::connections.
inline constexpr int kMaxConnections = 1024;

/// A model (and defense) served over HTTP. Not copyable.
class ModelServer {
 public:
  /// `model` and `defense` (null = none) must outlive the server. Throws
  /// std::invalid_argument on bad options or a defense set up for another image shape.
  ModelServer(const oracle::Classifier& model, const experiment::DefenseSetup* defense,
              ServeOptions options);
  ~ModelServer();
  ModelServer(const ModelServer&) = delete;
  ModelServer& operator=(const ModelServer&) = delete;

  /// Binds host:port; returns the bound port. Throws std::runtime_error if it cannot bind.
  int Bind();
  /// Serves until Stop() (blocks). Call Bind() first.
  void Listen();
  /// Stops Listen() (thread-safe; idempotent).
  void Stop();
  /// Listen() until Stop() or SIGINT / SIGTERM (whichever thread of LibTorch's or OpenBLAS's
  /// pools receives it): the signal writes one byte to a pipe (process::SignalScope,
  /// Then::kContinue) and a watcher thread reads it and stops the server. Returns when the
  /// server stopped. Throws std::runtime_error when the pipe cannot be made.
  void ListenUntilSignal();
  /// The bound port (0 before Bind).
  int port() const;
  /// Requests and images answered with 200 so far.
  long requests() const;
  /// Images scored so far.
  long images() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace advbo::serve
