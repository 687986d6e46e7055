#include "oracle/http_backend.h"

#include <httplib.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>
#include <vector>

namespace advbo::oracle {
namespace {

class HttpBackend : public ScoreBackend {
 public:
  HttpBackend(std::string url, std::string origin, std::string path, HttpOptions opt)
      : url_(std::move(url)), origin_(std::move(origin)), path_(std::move(path)), opt_(opt) {}

  Eigen::MatrixXd Scores(const float* images, int n, int c, int h, int w,
                         const QueryContext* ctx) const override {
    BackendAnswer a = Answer(images, n, c, h, w, ctx);
    for (bool r : a.refused)
      if (r)
        throw RefusedError(url_ + ": the served model's defense refused an image; it has no score");
    return std::move(a.scores);
  }

  BackendAnswer Answer(const float* images, int n, int c, int h, int w,
                       const QueryContext* ctx) const override {
    static_assert(sizeof(float) == 4, "float32 wire format");
    const size_t count = static_cast<size_t>(n) * c * h * w;
    std::string body(count * sizeof(float), '\0');
    std::memcpy(body.data(), images, body.size());  // x86-64 / aarch64: little-endian
    httplib::Headers headers = {{"X-Advbo-Shape", std::to_string(n) + "," + std::to_string(c) +
                                                      "," + std::to_string(h) + "," +
                                                      std::to_string(w)}};
    if (ctx) headers.emplace("X-Advbo-Purpose", QueryPurposeName(ctx->purpose));
    if (ctx && !ctx->session.empty()) {
      headers.emplace("X-Advbo-Session", ctx->session);
      headers.emplace("X-Advbo-Defense-Seed", std::to_string(ctx->defense_seed));
      headers.emplace("X-Advbo-True-Class", std::to_string(ctx->true_class));
      headers.emplace("X-Advbo-Target", std::to_string(ctx->target));
    }
    std::string last;
    for (int attempt = 0; attempt <= opt_.retries; ++attempt) {
      if (attempt > 0)
        std::this_thread::sleep_for(std::chrono::duration<double>(0.1 * std::pow(2, attempt - 1)));
      std::unique_ptr<httplib::Client> cli = Acquire();
      // The reply is read through a receiver that stops at kMaxHttpReplyBytes: a server that
      // streams an endless body cannot grow the client without bound.
      httplib::Request req;
      req.method = "POST";
      req.path = path_;
      req.headers = headers;
      req.body = body;
      req.set_header("Content-Type", "application/octet-stream");
      std::string reply;
      bool too_long = false;
      req.content_receiver = [&](const char* data, size_t len, uint64_t, uint64_t) {
        if (reply.size() + len > kMaxHttpReplyBytes) return !(too_long = true);
        reply.append(data, len);
        return true;
      };
      httplib::Response resp;
      httplib::Error error = httplib::Error::Success;
      const bool sent = cli->send(req, resp, error);
      if (too_long)
        throw ModelError(url_ + ": the reply is longer than " +
                         std::to_string(kMaxHttpReplyBytes >> 20) + " MiB; not read further");
      if (!sent) {
        last = httplib::to_string(error);
        continue;  // a dropped client is not returned to the pool
      }
      const int status = resp.status;
      Release(std::move(cli));
      if (status == 429 || status >= 500) {
        last = "HTTP " + std::to_string(status) + ErrorText(reply);
        continue;
      }
      if (status != 200)
        throw ModelError(url_ + ": the server refused the request: HTTP " + std::to_string(status) +
                         ErrorText(reply));
      return Parse(reply, n);
    }
    throw TransportError(url_ + ": no valid answer after " + std::to_string(opt_.retries + 1) +
                         " attempt(s) (" + last + ")");
  }

  std::string name() const override { return url_; }

 private:
  static std::string ErrorText(const std::string& body) {
    try {
      auto j = nlohmann::json::parse(body);
      if (j.is_object() && j.contains("error") && j["error"].is_string())
        return ": " + j["error"].get<std::string>();
    } catch (const std::exception&) {
    }
    if (body.empty()) return "";
    return ": " + body.substr(0, 200);
  }

  // The reply's [n] array `key` of booleans (empty when absent).
  std::vector<bool> Flags(const nlohmann::json& j, const char* key, int n) const {
    std::vector<bool> v;
    if (!j.contains(key)) return v;
    const auto& a = j[key];
    if (!a.is_array() || static_cast<int>(a.size()) != n)
      throw OutputError(url_ + ": the reply's \"" + key + "\" must be an array of " +
                        std::to_string(n) + " booleans");
    for (const auto& e : a) {
      if (!e.is_boolean())
        throw OutputError(url_ + ": the reply's \"" + key + "\" must hold booleans");
      v.push_back(e.get<bool>());
    }
    return v;
  }

  // {"scores": rows, "detected": [n]?, "refused": [n]?}: a refused image's row is null.
  BackendAnswer Parse(const std::string& reply, int n) const {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(reply);
    } catch (const std::exception&) {
      throw OutputError(url_ + ": the reply is not JSON (" + reply.substr(0, 80) + ")");
    }
    if (!j.is_object() || !j.contains("scores") || !j["scores"].is_array())
      throw OutputError(url_ + ": the reply has no \"scores\" array");
    const auto& s = j["scores"];
    if (static_cast<int>(s.size()) != n)
      throw OutputError(url_ + ": the reply has " + std::to_string(s.size()) + " score rows for " +
                        std::to_string(n) + " images");
    BackendAnswer out;
    out.detected = Flags(j, "detected", n);
    out.refused = Flags(j, "refused", n);
    size_t k = 0;
    for (const auto& row : s)
      if (row.is_array()) {
        k = row.size();
        break;
      }
    if (k == 0 && j.contains("classes") && j["classes"].is_number_integer() &&
        j["classes"].get<long>() >= 2 && j["classes"].get<long>() <= 100000)
      k = j["classes"].get<size_t>();  // every image refused: the width from "classes"
    if (k == 0) throw OutputError(url_ + ": the reply has no score row and no \"classes\" count");
    Eigen::MatrixXd& m = out.scores;
    m.setZero(n, static_cast<Eigen::Index>(k));
    for (int i = 0; i < n; ++i) {
      const bool refused = !out.refused.empty() && out.refused[i];
      if (s[i].is_null() && refused) continue;  // no score: the defense refused the image
      if (s[i].is_null())
        throw OutputError(url_ + ": score row " + std::to_string(i) +
                          " is null but the reply does not mark it \"refused\"");
      if (!s[i].is_array() || s[i].size() != k)
        throw OutputError(url_ + ": score rows must be non-empty arrays of equal length");
      if (refused) continue;  // a refused image's row is never read, whatever it holds
      for (size_t c = 0; c < k; ++c) {
        if (!s[i][c].is_number())
          throw OutputError(url_ + ": score [" + std::to_string(i) + "][" + std::to_string(c) +
                            "] is not a number");
        m(i, static_cast<Eigen::Index>(c)) = s[i][c].get<double>();
      }
    }
    return out;
  }

  std::unique_ptr<httplib::Client> Acquire() const {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!pool_.empty()) {
        auto c = std::move(pool_.back());
        pool_.pop_back();
        return c;
      }
    }
    auto c = std::make_unique<httplib::Client>(origin_);
    const auto t = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::duration<double>(opt_.timeout_seconds));
    c->set_connection_timeout(t);
    c->set_read_timeout(t);
    c->set_write_timeout(t);
    c->set_keep_alive(true);
    c->set_tcp_nodelay(true);  // small requests: no Nagle / delayed-ACK 40 ms stalls
    return c;
  }

  void Release(std::unique_ptr<httplib::Client> c) const {
    std::lock_guard<std::mutex> lock(mu_);
    pool_.push_back(std::move(c));
  }

  std::string url_, origin_, path_;
  HttpOptions opt_;
  mutable std::mutex mu_;
  mutable std::vector<std::unique_ptr<httplib::Client>> pool_;
};

}  // namespace

void HttpOptions::Validate() const {
  if (!(timeout_seconds > 0) || !std::isfinite(timeout_seconds))
    throw std::invalid_argument("--http-timeout must be > 0 seconds");
  if (retries < 0 || retries > 100) throw std::invalid_argument("--http-retries must be in 0..100");
}

std::unique_ptr<ScoreBackend> MakeHttpBackend(const std::string& url, const HttpOptions& opt) {
  opt.Validate();
  static const std::regex re(
      R"(^(https?://[A-Za-z0-9.\-]+|https?://\[[0-9A-Fa-f:]+\])(:[0-9]{1,5})?(/[^\s#]*)?$)");
  std::smatch m;
  if (!std::regex_match(url, m, re))
    throw ModelError(url + ": not a valid model URL (expected http://HOST:PORT/PATH)");
  std::string origin = m[1].str() + m[2].str();
  std::string path = m[3].matched && !m[3].str().empty() ? m[3].str() : "/predict";
  if (m[2].matched && std::stol(m[2].str().substr(1)) > 65535)
    throw ModelError(url + ": port out of range");
  return std::make_unique<HttpBackend>(url, origin, path, opt);
}

}  // namespace advbo::oracle
