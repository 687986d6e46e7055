#include "serve/server.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
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

// The request's X-Advbo-Purpose (attack when absent); a bad one is a 400.
oracle::QueryPurpose PurposeOf(const httplib::Request& req) {
  if (!req.has_header("X-Advbo-Purpose")) return oracle::QueryPurpose::kAttack;
  return HeaderValue(
      [&] { return oracle::ParseQueryPurpose(req.get_header_value("X-Advbo-Purpose")); });
}

// Setup queries (a run's shape probe, selection and clean accuracy) are answered as a local
// run scores them: not seen by the detector nor the defender, so that they are never
// refused as repeats and a defender never learns from them.
bool IsSetup(oracle::QueryPurpose p) {
  return p == oracle::QueryPurpose::kShapeProbe || p == oracle::QueryPurpose::kSelection ||
         p == oracle::QueryPurpose::kCleanAccuracy;
}

void Reply(httplib::Response& res, int status, const nlohmann::json& j) {
  res.status = status;
  res.set_content(j.dump(), "application/json");
}

// httplib's thread pool with a deadline for each request head (the request line and headers):
// a client that trickles its head, each byte within --read-timeout, would otherwise hold a
// connection thread for as long as it likes, and --connections such clients starve the
// server (/health included). Each accepted connection is found in /proc/self/fd when httplib
// hands it over (its server-side socket: local port = the server's); from the moment a thread
// takes it up, and again after every reply, it has --head-timeout seconds to deliver its next
// request head, else a watchdog shuts the socket down and httplib drops it. A connection still
// queued for a thread is not timed; a request whose head arrived (its body under
// --body-timeout, its scoring) is not either.
class HeadDeadlineQueue : public httplib::TaskQueue {
 public:
  /// `owner` (the server's pointer to this queue) is cleared when httplib deletes the queue
  /// at the end of a listen, so nothing reads a deleted queue afterwards.
  HeadDeadlineQueue(int threads, int port, double head_seconds,
                    std::atomic<HeadDeadlineQueue*>* owner)
      : pool_(static_cast<size_t>(threads)), port_(port), limit_(head_seconds), owner_(owner) {
    owner_->store(this);
    watchdog_ = std::thread([this] { Watch(); });
  }
  ~HeadDeadlineQueue() override {
    StopWatchdog();
    HeadDeadlineQueue* self = this;
    owner_->compare_exchange_strong(self, nullptr);
  }

  void enqueue(std::function<void()> fn) override {
    const Peer conn = NewConnection();
    pool_.enqueue([this, fn = std::move(fn), conn] {
      Begin(conn);
      fn();
      End();
    });
  }
  void shutdown() override {
    StopWatchdog();
    pool_.shutdown();
  }

  /// The calling worker's request head arrived (the pre-routing handler).
  void HeadArrived() { Set(std::this_thread::get_id(), false); }
  /// The calling worker answered; its connection's next head is due within the deadline.
  void Answered() { Set(std::this_thread::get_id(), true); }
  /// Connections cut for a late head so far.
  long cut() const { return cut_.load(); }

 private:
  // A server-side socket and its peer's port (fd numbers are reused; the pair is not, soon).
  struct Peer {
    int fd = -1;
    int peer_port = -1;
  };
  struct Tracked {
    Peer conn;
    bool waiting = true;  // for a request head
    std::chrono::steady_clock::time_point since;
  };

  // The peer port of fd when it is a connected socket whose local port is the server's, else -1.
  int PeerPortOf(int fd) const {
    sockaddr_storage local{}, peer{};
    socklen_t n = sizeof local;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &n) != 0) return -1;
    const auto port_of = [](const sockaddr_storage& a) {
      if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(a).sin_port);
      if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(a).sin6_port);
      return static_cast<uint16_t>(0);
    };
    if (port_of(local) != port_) return -1;
    n = sizeof peer;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &n) != 0) return -1;
    return port_of(peer);
  }

  // The connection httplib just accepted: a server-side socket no worker holds yet.
  Peer NewConnection() {
    DIR* dir = opendir("/proc/self/fd");
    if (!dir) return {};
    std::vector<Peer> found;
    while (dirent* e = readdir(dir)) {
      char* end = nullptr;
      const long fd = std::strtol(e->d_name, &end, 10);
      if (end == e->d_name || *end != '\0' || fd == dirfd(dir)) continue;
      struct stat st {};
      if (fstat(static_cast<int>(fd), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
      const int peer = PeerPortOf(static_cast<int>(fd));
      if (peer > 0) found.push_back({static_cast<int>(fd), peer});
    }
    closedir(dir);
    std::lock_guard<std::mutex> lock(mu_);
    for (const Peer& p : found) {
      bool known = false;
      for (const auto& [tid, t] : tracked_)
        known |= t.conn.fd == p.fd && t.conn.peer_port == p.peer_port;
      for (const Peer& q : handed_) known |= q.fd == p.fd && q.peer_port == p.peer_port;
      if (!known) {
        handed_.push_back(p);
        return p;
      }
    }
    return {};  // not found (an fd reused in between): this connection goes untimed
  }

  void Begin(const Peer& conn) {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < handed_.size(); ++i)
      if (handed_[i].fd == conn.fd && handed_[i].peer_port == conn.peer_port) {
        handed_.erase(handed_.begin() + static_cast<long>(i));
        break;
      }
    if (conn.fd >= 0)
      tracked_[std::this_thread::get_id()] = {conn, true, std::chrono::steady_clock::now()};
  }
  void End() {
    std::lock_guard<std::mutex> lock(mu_);
    tracked_.erase(std::this_thread::get_id());
  }
  void Set(std::thread::id tid, bool waiting) {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = tracked_.find(tid);
    if (it == tracked_.end()) return;
    it->second.waiting = waiting;
    it->second.since = std::chrono::steady_clock::now();
  }

  void Watch() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      wake_.wait_for(lock, std::chrono::milliseconds(100));
      const auto now = std::chrono::steady_clock::now();
      for (auto& [tid, t] : tracked_) {
        if (!t.waiting || std::chrono::duration<double>(now - t.since).count() <= limit_) continue;
        // Still the same connection (not closed and its fd reused): cut it.
        if (PeerPortOf(t.conn.fd) == t.conn.peer_port) {
          ::shutdown(t.conn.fd, SHUT_RDWR);
          ++cut_;
        }
        t.waiting = false;  // cut once
      }
    }
  }
  void StopWatchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) return;
      stop_ = true;
    }
    wake_.notify_all();
    if (watchdog_.joinable()) watchdog_.join();
  }

  httplib::ThreadPool pool_;
  const int port_;
  const double limit_;
  std::atomic<HeadDeadlineQueue*>* owner_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::map<std::thread::id, Tracked> tracked_;  // the connection each busy worker holds
  std::vector<Peer> handed_;                    // accepted, not yet taken up by a worker
  std::atomic<long> cut_{0};
  std::thread watchdog_;
};

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
  // A run's setup session: the input stages of a defense seeded as the client's selection
  // is (its X-Advbo-Defense-Seed), so a served selection equals a local one.
  struct SetupSession {
    std::function<void(float*, int)> transform;
    uint64_t seed;
  };
  std::map<std::string, SetupSession> setup_sessions;
  std::deque<std::string> setup_order;

  int max_sessions;  // opt.max_sessions, or its default for this defense
  std::atomic<HeadDeadlineQueue*> queue{nullptr};  // made by httplib's listen, owned by it

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
            {"detections", detections.load()},
            {"head_timeouts", queue.load() ? queue.load()->cut() : 0L}};
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

  // X-Advbo-Defense-Seed of the request; a bad one is a 400.
  static uint64_t DefenseSeedOf(const httplib::Request& req) {
    const std::string seed_text = req.get_header_value("X-Advbo-Defense-Seed");
    try {
      size_t used = 0;
      if (seed_text.empty() || seed_text[0] == '-') throw std::invalid_argument("");
      const uint64_t seed = std::stoull(seed_text, &used);
      if (used != seed_text.size()) throw std::invalid_argument("");
      return seed;
    } catch (const std::exception&) {
      throw BadRequest(400, "X-Advbo-Defense-Seed '" + seed_text + "' is not an unsigned integer");
    }
  }

  // The input transform for a setup query: the session's setup defense (created on its first
  // setup query, seeded by its X-Advbo-Defense-Seed), or the shared one without a session.
  // Null without input stages. Holds mu.
  const std::function<void(float*, int)>& SetupTransformOf(const httplib::Request& req) {
    if (!req.has_header("X-Advbo-Session")) return shared_transform;
    if (!req.has_header("X-Advbo-Defense-Seed"))
      throw BadRequest(400, "X-Advbo-Session needs X-Advbo-Defense-Seed");
    const std::string id = req.get_header_value("X-Advbo-Session");
    const uint64_t seed = DefenseSeedOf(req);
    auto it = setup_sessions.find(id);
    if (it != setup_sessions.end()) {
      if (it->second.seed != seed)
        throw BadRequest(409, "session '" + id + "' was opened with another seed");
      return it->second.transform;
    }
    if (static_cast<int>(setup_sessions.size()) >= max_sessions) {
      setup_sessions.erase(setup_order.front());
      setup_order.pop_front();
    }
    setup_order.push_back(id);
    return setup_sessions.emplace(id, SetupSession{defense->SelectionTransform(seed), seed})
        .first->second.transform;
  }

  // The session of this request (nullptr = the shared, session-less defense). Holds mu.
  Session* SessionOf(const httplib::Request& req) {
    if (!req.has_header("X-Advbo-Session")) return nullptr;
    const std::string id = req.get_header_value("X-Advbo-Session");
    for (const char* h : {"X-Advbo-Defense-Seed", "X-Advbo-True-Class", "X-Advbo-Target"})
      if (!req.has_header(h)) throw BadRequest(400, std::string("X-Advbo-Session needs ") + h);
    const uint64_t seed = DefenseSeedOf(req);
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

  // An attack's (or verify, or session-less) query through the defense of its session: the
  // detector sees the images as sent, then input stages, model, output stages; a rejecting
  // detector's refusals are marked in *refused (every image, all false when none was) and
  // their rows flattened for the defender's payoff, as oracle::WithDetector does. Holds mu.
  void Answer(const httplib::Request& req, float* x, int n, Eigen::MatrixXd* raw_out,
              std::vector<bool>* detected, std::vector<bool>* refused) {
    Eigen::MatrixXd& raw = *raw_out;
    Session* s = defense ? SessionOf(req) : nullptr;
    if (s && s->queries + n > opt.max_session_queries)
      throw BadRequest(403, "session '" + req.get_header_value("X-Advbo-Session") + "' has sent " +
                                std::to_string(s->queries) + " of " +
                                std::to_string(opt.max_session_queries) +
                                " images (--max-session-queries); open a new session");
    // A stateful detector sees the images as sent, before any input stage.
    const auto& monitor = s ? s->defense.monitor : shared_defense.monitor;
    if (monitor) {
      *detected = monitor(x, n);
      for (bool d : *detected) detections += d;
    }
    if (s) {
      s->queries += n;
      if (s->defense.transform) s->defense.transform(x, n);
    } else if (shared_transform) {
      shared_transform(x, n);
    }
    raw = model.RawScores(x, n);
    const bool reject = monitor && (s ? s->defense.reject : shared_defense.reject);
    if (reject) *refused = *detected;
    // Output post-processing (round, topk, aaa): the client gets the post-processed
    // log-probabilities as its scores (valid logits).
    const auto& output = s ? s->defense.output : shared_output;
    if (output || reject) {
      raw = model.LogProbabilitiesOf(raw);
      if (output) output(&raw);
      // The defender's payoff of a refused query is that of a flat answer, as locally.
      for (int i = 0; i < n && reject; ++i)
        if ((*refused)[i]) raw.row(i).setConstant(-std::log(static_cast<double>(raw.cols())));
    }
    if (s && s->defense.feedback)
      s->defense.feedback(oracle::ScoreBatch(output || reject ? raw : model.LogProbabilitiesOf(raw),
                                             s->true_class, s->target));
  }

  void Predict(const httplib::Request& req, httplib::Response& res,
               const httplib::ContentReader& reader) {
    bool body_read = false;
    try {
      const Body body = ReadBody(req, reader);
      body_read = true;
      int n = 0;
      std::vector<float> x = ReadImages(req, body, &n);
      const oracle::QueryPurpose purpose = PurposeOf(req);
      Eigen::MatrixXd raw;
      std::vector<bool> detected, refused;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (defense && IsSetup(purpose)) {
          // As a local run: the shape probe sees the model alone, selection and clean
          // accuracy the defense's input stages (Experiment::Init).
          if (purpose != oracle::QueryPurpose::kShapeProbe)
            if (const auto& t = SetupTransformOf(req)) t(x.data(), n);
          raw = model.RawScores(x.data(), n);
        } else {
          Answer(req, x.data(), n, &raw, &detected, &refused);
        }
      }
      nlohmann::json rows = nlohmann::json::array();
      long refused_count = 0;
      for (int i = 0; i < n; ++i) {
        if (!refused.empty() && refused[i]) {
          rows.push_back(nullptr);  // no score: the detector refused the image
          ++refused_count;
          continue;
        }
        nlohmann::json row = nlohmann::json::array();
        for (int c = 0; c < raw.cols(); ++c) row.push_back(raw(i, c));
        rows.push_back(std::move(row));
      }
      ++requests;
      images += n;
      nlohmann::json reply = {{"scores", std::move(rows)}, {"classes", raw.cols()}};
      if (!detected.empty()) reply["detected"] = detected;
      if (!refused.empty()) reply["refused"] = refused;
      res.set_header("X-Advbo-Refused", std::to_string(refused_count));
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
  if (!(head_timeout_seconds > 0) || head_timeout_seconds > 3600)
    throw std::invalid_argument("--head-timeout must be in (0, 3600] seconds");
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
  p->server.new_task_queue = [p] {
    return new HeadDeadlineQueue(p->opt.connections, p->port, p->opt.head_timeout_seconds,
                                 &p->queue);
  };
  p->server.set_pre_routing_handler([p](const httplib::Request&, httplib::Response&) {
    if (auto* q = p->queue.load()) q->HeadArrived();
    return httplib::Server::HandlerResponse::Unhandled;
  });
  p->server.set_post_routing_handler([p](const httplib::Request&, httplib::Response&) {
    if (auto* q = p->queue.load()) q->Answered();
  });
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
