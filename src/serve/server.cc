#include "serve/server.h"

#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "data/datasets.h"
#include "oracle/oracle.h"
#include "process/signals.h"
#include "text/numbers.h"

namespace advbo::serve {
namespace {

// A request the server refuses (4xx) with a message.
struct BadRequest : std::runtime_error {
  BadRequest(int status, const std::string& m) : std::runtime_error(m), status(status) {}
  int status;
};

// `parse()` (a header's parser, text/numbers.h), with its std::invalid_argument turned into
// a 400 Bad Request carrying the same message.
template <class Parse>
auto HeaderValue(Parse parse) -> decltype(parse()) {
  try {
    return parse();
  } catch (const std::invalid_argument& e) {
    throw BadRequest(400, e.what());
  }
}

// The one integer of header `name` of `req`; a bad one is a 400.
long HeaderInteger(const httplib::Request& req, const char* name) {
  return HeaderValue([&] { return text::ParseInteger(req.get_header_value(name), name); });
}

void Reply(httplib::Response& res, int status, const nlohmann::json& j) {
  res.status = status;
  res.set_content(j.dump(), "application/json");
}

}  // namespace

struct ModelServer::Impl {
  const oracle::Classifier& model;
  const experiment::DefenseSetup* defense;
  ServeOptions opt;
  httplib::Server server;
  int port = 0;
  std::atomic<long> requests{0}, images{0}, detections{0};

  std::mutex mu;  // model, defenses and sessions: one request at a time
  std::function<void(float*, int)> shared_transform;
  std::function<void(Eigen::MatrixXd*)> shared_output;
  experiment::DefenseSetup::InstanceDefense shared_defense;  // session-less requests' detector
  struct Session {
    experiment::DefenseSetup::InstanceDefense defense;
    uint64_t seed;
    int true_class, target;
    long queries = 0;  // images scored in this session
  };
  std::map<std::string, Session> sessions;
  std::deque<std::string> session_order;

  int max_sessions;  // opt.max_sessions, or its default for this defense

  Impl(const oracle::Classifier& m, const experiment::DefenseSetup* d, ServeOptions o)
      : model(m), defense(d && !d->empty() ? d : nullptr), opt(std::move(o)) {
    max_sessions = opt.max_sessions > 0            ? opt.max_sessions
                   : defense && defense->is_game() ? kDefaultGameSessions
                                                   : kDefaultSessions;
  }

  nlohmann::json Health() const {
    return {{"status", "ok"},
            {"model", experiment::RecordPath(model.path())},
            {"input", {model.channels(), model.height(), model.width()}},
            {"classes", model.num_classes()},
            {"output", model.outputs_logits() ? "logits" : "probabilities"},
            {"defense", defense ? defense->Spec() : "none"},
            {"normalize", model.normalization() ? model.normalization()->Spec() : "none"},
            {"max_batch", opt.max_batch},
            {"max_body_bytes", opt.max_body_bytes},
            {"max_sessions", max_sessions},
            {"max_session_queries", opt.max_session_queries},
            {"requests", requests.load()},
            {"images", images.load()},
            {"detections", detections.load()}};
  }

  // A request body as read: the raw bytes, or the file parts of a multipart form.
  struct Body {
    std::string bytes;
    std::vector<std::pair<std::string, std::string>> parts;  // (name, content)
  };

  // Reads the body through httplib's content reader, so limits hold while reading and not
  // after: a Content-Length that is not a byte count (400) or above --max-body-mb (413) is
  // answered before a byte is read; chunked and compressed bodies are counted after decoding
  // and cut at the limit (413); a body that does not arrive within --body-timeout is cut
  // (408). Throws BadRequest.
  Body ReadBody(const httplib::Request& req, const httplib::ContentReader& reader) const {
    const size_t limit = opt.max_body_bytes;
    const std::string mb = std::to_string(static_cast<double>(limit) / (1 << 20));
    if (req.has_header("Content-Length")) {
      const std::string v = req.get_header_value("Content-Length");
      if (v.empty() || v.size() > 19 || !std::all_of(v.begin(), v.end(), ::isdigit))
        throw BadRequest(400, "Content-Length '" + v + "' is not a byte count");
      if (std::stoull(v) > limit)
        throw BadRequest(413, "request body of " + v + " bytes; --max-body-mb allows " +
                                  std::to_string(limit) + " bytes");
    }
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(opt.body_timeout_seconds);
    size_t total = 0;
    int refused = 0;
    auto count = [&](size_t n) {
      total += n;
      if (total > limit)
        refused = 413;
      else if (std::chrono::steady_clock::now() > deadline)
        refused = 408;
      return refused == 0;
    };
    Body b;
    bool ok = false;
    if (req.is_multipart_form_data()) {
      ok = reader(
          [&](const httplib::MultipartFormData& f) {
            if (static_cast<int>(b.parts.size()) >= opt.max_batch) {
              refused = 413;
              return false;
            }
            b.parts.push_back({f.name, std::string()});
            return true;
          },
          [&](const char* d, size_t n) {
            if (!count(n) || b.parts.empty()) return false;
            b.parts.back().second.append(d, n);
            return true;
          });
    } else {
      ok = reader([&](const char* d, size_t n) {
        if (!count(n)) return false;
        b.bytes.append(d, n);
        return true;
      });
    }
    if (refused == 413)
      throw BadRequest(
          413, b.parts.size() >= static_cast<size_t>(opt.max_batch) && total <= limit
                   ? "more than " + std::to_string(opt.max_batch) + " image parts (--max-batch)"
                   : "request body larger than --max-body-mb (" + std::to_string(limit) +
                         " bytes, counted after decoding)");
    if (refused == 408)
      throw BadRequest(408, "request body not received within --body-timeout (" +
                                std::to_string(opt.body_timeout_seconds) + " s)");
    if (!ok)
      throw BadRequest(400,
                       "cannot read the request body (malformed chunked, compressed or "
                       "multipart encoding, or the connection broke)");
    return b;
  }

  // The images of a request body as n * C*H*W floats in [0, 1]. Encoded images are checked
  // against the model's size from their header before they are decoded.
  std::vector<float> ReadImages(const httplib::Request& req, const Body& body, int* n) const {
    const int c = model.channels(), h = model.height(), w = model.width();
    const size_t d = static_cast<size_t>(c) * h * w;
    std::vector<float> x;
    const std::string type = req.get_header_value("Content-Type");
    auto add_png = [&](const std::string& text, const std::string& name) {
      const std::vector<uint8_t> bytes(text.begin(), text.end());
      const auto [hw, hh] = data::ImageHeaderSize(bytes);
      if (hw < 0 || hh < 0)
        throw BadRequest(400, name + ": not a PNG, BMP or JPEG image (no readable header)");
      if (hh != h || hw != w)
        throw BadRequest(400, name + ": image is " + std::to_string(hh) + "x" + std::to_string(hw) +
                                  ", the model takes " + std::to_string(h) + "x" +
                                  std::to_string(w));
      data::ImageSet s;
      try {
        s = data::DecodeImage(bytes, name, c);
      } catch (const std::exception& e) {
        throw BadRequest(400, e.what());
      }
      if (s.height != h || s.width != w)
        throw BadRequest(400, name + ": image is " + std::to_string(s.height) + "x" +
                                  std::to_string(s.width) + ", the model takes " +
                                  std::to_string(h) + "x" + std::to_string(w));
      x.insert(x.end(), s.pixels.begin(), s.pixels.end());
    };
    if (req.is_multipart_form_data()) {
      for (const auto& [key, content] : body.parts) add_png(content, "part '" + key + "'");
      if (x.empty()) throw BadRequest(400, "multipart request without image parts");
    } else if (type.rfind("image/", 0) == 0) {
      add_png(body.bytes, "request body");
    } else if (type.rfind("application/octet-stream", 0) == 0) {
      if (!req.has_header("X-Advbo-Shape"))
        throw BadRequest(400, "application/octet-stream needs the header X-Advbo-Shape: N,C,H,W");
      const std::vector<long> shape = HeaderValue([&] {
        return text::ParseIntegerList(req.get_header_value("X-Advbo-Shape"), ',', "X-Advbo-Shape");
      });
      if (shape.size() != 4) throw BadRequest(400, "X-Advbo-Shape must be N,C,H,W");
      if (shape[1] != c || shape[2] != h || shape[3] != w)
        throw BadRequest(400, "X-Advbo-Shape " + req.get_header_value("X-Advbo-Shape") +
                                  ": the model takes [N, " + std::to_string(c) + ", " +
                                  std::to_string(h) + ", " + std::to_string(w) + "]");
      if (shape[0] < 1 || shape[0] > opt.max_batch)
        throw BadRequest(shape[0] < 1 ? 400 : 413, "batch of " + std::to_string(shape[0]) +
                                                       " images; allowed 1.." +
                                                       std::to_string(opt.max_batch));
      if (body.bytes.size() != static_cast<size_t>(shape[0]) * d * sizeof(float))
        throw BadRequest(400, "body has " + std::to_string(body.bytes.size()) + " bytes, " +
                                  "X-Advbo-Shape needs " +
                                  std::to_string(static_cast<size_t>(shape[0]) * d * 4));
      x.resize(static_cast<size_t>(shape[0]) * d);
      std::memcpy(x.data(), body.bytes.data(), body.bytes.size());
    } else {
      throw BadRequest(415, "Content-Type '" + type +
                                "' not supported: use application/octet-stream (float32 NCHW "
                                "with X-Advbo-Shape), image/png or multipart/form-data");
    }
    *n = static_cast<int>(x.size() / d);
    if (*n > opt.max_batch)
      throw BadRequest(413, "batch of " + std::to_string(*n) + " images; allowed 1.." +
                                std::to_string(opt.max_batch));
    for (size_t i = 0; i < x.size(); ++i)
      if (!(x[i] >= 0.0f && x[i] <= 1.0f))
        throw BadRequest(
            400, "pixel " + std::to_string(i) + " is not a number in [0, 1] (the input contract)");
    return x;
  }

  // The session of this request (nullptr = the shared, session-less defense). Holds mu.
  Session* SessionOf(const httplib::Request& req) {
    if (!req.has_header("X-Advbo-Session")) return nullptr;
    const std::string id = req.get_header_value("X-Advbo-Session");
    for (const char* h : {"X-Advbo-Defense-Seed", "X-Advbo-True-Class", "X-Advbo-Target"})
      if (!req.has_header(h)) throw BadRequest(400, std::string("X-Advbo-Session needs ") + h);
    const std::string seed_text = req.get_header_value("X-Advbo-Defense-Seed");
    uint64_t seed = 0;
    try {
      size_t used = 0;
      if (seed_text.empty() || seed_text[0] == '-') throw std::invalid_argument("");
      seed = std::stoull(seed_text, &used);
      if (used != seed_text.size()) throw std::invalid_argument("");
    } catch (const std::exception&) {
      throw BadRequest(400, "X-Advbo-Defense-Seed '" + seed_text + "' is not an unsigned integer");
    }
    const long tc = HeaderInteger(req, "X-Advbo-True-Class");
    const long tg = HeaderInteger(req, "X-Advbo-Target");
    const int k = model.num_classes();
    if (tc < 0 || tc >= k)
      throw BadRequest(400, "X-Advbo-True-Class outside 0.." + std::to_string(k - 1));
    if (tg < -1 || tg >= k || tg == tc)
      throw BadRequest(400, "X-Advbo-Target must be -1 or a class != the true class");
    auto it = sessions.find(id);
    if (it != sessions.end()) {
      if (it->second.seed != seed || it->second.true_class != tc || it->second.target != tg)
        throw BadRequest(409, "session '" + id + "' was opened with other seed/class/target");
      return &it->second;
    }
    if (static_cast<int>(sessions.size()) >= max_sessions) {
      sessions.erase(session_order.front());
      session_order.pop_front();
    }
    session_order.push_back(id);
    Session s{defense->ForInstance(seed), seed, static_cast<int>(tc), static_cast<int>(tg)};
    return &sessions.emplace(id, std::move(s)).first->second;
  }

  void Predict(const httplib::Request& req, httplib::Response& res,
               const httplib::ContentReader& reader) {
    bool body_read = false;
    try {
      const Body body = ReadBody(req, reader);
      body_read = true;
      int n = 0;
      std::vector<float> x = ReadImages(req, body, &n);
      Eigen::MatrixXd raw;
      std::vector<bool> detected;
      {
        std::lock_guard<std::mutex> lock(mu);
        Session* s = defense ? SessionOf(req) : nullptr;
        if (s && s->queries + n > opt.max_session_queries)
          throw BadRequest(403, "session '" + req.get_header_value("X-Advbo-Session") +
                                    "' has sent " + std::to_string(s->queries) + " of " +
                                    std::to_string(opt.max_session_queries) +
                                    " images (--max-session-queries); open a new session");
        // A stateful detector sees the images as sent, before any input stage.
        const auto& monitor = s ? s->defense.monitor : shared_defense.monitor;
        if (monitor) {
          detected = monitor(x.data(), n);
          for (bool d : detected) detections += d;
        }
        if (s) {
          s->queries += n;
          if (s->defense.transform) s->defense.transform(x.data(), n);
        } else if (shared_transform) {
          shared_transform(x.data(), n);
        }
        raw = model.RawScores(x.data(), n);
        const bool reject = s ? s->defense.reject : shared_defense.reject;
        // Output post-processing (round, topk, aaa): the client gets the post-processed
        // log-probabilities as its scores (valid logits).
        const auto& output = s ? s->defense.output : shared_output;
        const bool refused = reject && !detected.empty();
        if (output || refused) {
          raw = model.LogProbabilitiesOf(raw);
          if (output) output(&raw);
          // A refused query gets a flat answer (every class equally likely).
          for (int i = 0; i < n && refused; ++i)
            if (detected[i]) raw.row(i).setConstant(-std::log(static_cast<double>(raw.cols())));
        }
        if (s && s->defense.feedback)
          s->defense.feedback(oracle::ScoreBatch(
              output || refused ? raw : model.LogProbabilitiesOf(raw), s->true_class, s->target));
      }
      nlohmann::json rows = nlohmann::json::array();
      for (int i = 0; i < n; ++i) {
        nlohmann::json row = nlohmann::json::array();
        for (int c = 0; c < raw.cols(); ++c) row.push_back(raw(i, c));
        rows.push_back(std::move(row));
      }
      ++requests;
      images += n;
      nlohmann::json reply = {{"scores", std::move(rows)}};
      if (!detected.empty()) reply["detected"] = detected;
      Reply(res, 200, reply);
    } catch (const BadRequest& e) {
      Reply(res, e.status, {{"error", e.what()}});
      // Unread body bytes would be parsed as the next request: ask the client to close.
      if (!body_read) res.set_header("Connection", "close");
    } catch (const std::exception& e) {
      Reply(res, 500, {{"error", e.what()}});
    }
  }
};

void ServeOptions::Validate() const {
  if (max_batch < 1) throw std::invalid_argument("--max-batch must be >= 1");
  if (max_body_bytes < 1) throw std::invalid_argument("--max-body-mb must be > 0");
  if (max_sessions < 0) throw std::invalid_argument("--max-sessions must be >= 1");
  if (max_session_queries < 1 || max_session_queries > 100000000)
    throw std::invalid_argument("--max-session-queries must be in 1..1e8");
  if (connections < 1 || connections > kMaxConnections)
    throw std::invalid_argument("--connections must be in 1.." + std::to_string(kMaxConnections));
  if (!(read_timeout_seconds > 0) || read_timeout_seconds > 3600)
    throw std::invalid_argument("--read-timeout must be in (0, 3600] seconds");
  if (!(body_timeout_seconds > 0) || body_timeout_seconds > 86400)
    throw std::invalid_argument("--body-timeout must be in (0, 86400] seconds");
  if (port < 0 || port > 65535) throw std::invalid_argument("--port must be in 0..65535");
}

ModelServer::ModelServer(const oracle::Classifier& model, const experiment::DefenseSetup* defense,
                         ServeOptions opt) {
  opt.Validate();
  if (defense && !defense->empty() &&
      (defense->channels() != model.channels() || defense->height() != model.height() ||
       defense->width() != model.width()))
    throw std::invalid_argument("the defense was set up for another image shape than the model's");
  impl_ = std::make_unique<Impl>(model, defense, opt);
  Impl* p = impl_.get();
  if (p->defense) {
    p->shared_defense = p->defense->ForInstance(opt.seed);
    p->shared_transform = p->defense->SelectionTransform(opt.seed);
    p->shared_output = p->shared_defense.output;
  }
  const int connections = opt.connections;
  p->server.new_task_queue = [connections] { return new httplib::ThreadPool(connections); };
  p->server.set_payload_max_length(opt.max_body_bytes);
  p->server.set_read_timeout(std::chrono::duration<double>(opt.read_timeout_seconds));
  p->server.set_write_timeout(std::chrono::duration<double>(opt.read_timeout_seconds));
  p->server.set_keep_alive_max_count(1000);  // httplib's 5 makes clients reconnect often
  p->server.set_keep_alive_timeout(
      static_cast<time_t>(std::max(1.0, std::ceil(opt.read_timeout_seconds))));
  p->server.set_tcp_nodelay(true);
  p->server.Get("/health", [p](const httplib::Request&, httplib::Response& res) {
    Reply(res, 200, p->Health());
  });
  p->server.Post("/predict",
                 [p](const httplib::Request& req, httplib::Response& res,
                     const httplib::ContentReader& reader) { p->Predict(req, res, reader); });
  p->server.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    std::string m = res.status == 404
                        ? "no such endpoint " + req.path + " (POST /predict, GET /health)"
                    : res.status == 413 ? "request body too large (--max-body-mb)"
                                        : "HTTP " + std::to_string(res.status);
    Reply(res, res.status, {{"error", m}});
  });
}

ModelServer::~ModelServer() { Stop(); }

int ModelServer::Bind() {
  int port = impl_->opt.port;
  if (port == 0) {
    port = impl_->server.bind_to_any_port(impl_->opt.host);
    if (port < 0) port = 0;
  } else if (!impl_->server.bind_to_port(impl_->opt.host, port)) {
    port = 0;
  }
  if (port == 0)
    throw std::runtime_error("cannot bind " + impl_->opt.host + ":" +
                             std::to_string(impl_->opt.port) + " (in use or not a local address)");
  impl_->port = port;
  return port;
}

void ModelServer::Listen() { impl_->server.listen_after_bind(); }
void ModelServer::Stop() {
  if (impl_) impl_->server.stop();
}
int ModelServer::port() const { return impl_->port; }
long ModelServer::requests() const { return impl_->requests.load(); }
long ModelServer::images() const { return impl_->images.load(); }

namespace {

// A stop signal: one byte to the pipe whose write end is *fd.
void WriteStopByte(int, void* fd) {
  const char c = 1;
  (void)!write(*static_cast<int*>(fd), &c, 1);
}

}  // namespace

void ModelServer::ListenUntilSignal() {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("cannot create the server's stop pipe");
  {
    process::SignalScope scope(WriteStopByte, &fds[1], process::SignalScope::Then::kContinue);
    std::thread stopper([this, fd = fds[0]] {
      char c;
      while (read(fd, &c, 1) < 0 && errno == EINTR) {
      }
      Stop();
    });
    Listen();
    // Listen returned (stopped, or failed): wake the watcher if no signal did.
    const char c = 0;
    (void)!write(fds[1], &c, 1);
    stopper.join();
  }
  close(fds[0]);
  close(fds[1]);
}

}  // namespace advbo::serve
