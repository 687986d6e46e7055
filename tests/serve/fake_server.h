// A stand-in model server for the HTTP client tests: cpp-httplib's server on a free loopback
// port with the test's own POST /predict handler (to misbehave on purpose) and a /health.
// Include after any Eigen header: glibc's <resolv.h>, pulled in by httplib, defines a macro
// `_res` that Eigen uses as a parameter name.
#pragma once

#include <httplib.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

namespace advbo::testing {

/// Polls GET /health on 127.0.0.1:port until it answers (up to 2 s); throws otherwise.
inline void WaitUntilServing(int port) {
  httplib::Client c("127.0.0.1", port);
  for (int i = 0; i < 200; ++i) {
    if (auto r = c.Get("/health")) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  throw std::runtime_error("server on port " + std::to_string(port) + " did not come up");
}

/// Serves `handler` at POST /predict until destroyed.
class FakeModelServer {
 public:
  explicit FakeModelServer(httplib::Server::Handler handler) {
    svr_.Post("/predict", std::move(handler));
    svr_.Get("/health", [](const httplib::Request&, httplib::Response& r) {
      r.set_content("ok", "text/plain");
    });
    port_ = svr_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { svr_.listen_after_bind(); });
    WaitUntilServing(port_);
  }
  ~FakeModelServer() {
    svr_.stop();
    thread_.join();
  }
  FakeModelServer(const FakeModelServer&) = delete;
  FakeModelServer& operator=(const FakeModelServer&) = delete;
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/predict"; }

 private:
  httplib::Server svr_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace advbo::testing
