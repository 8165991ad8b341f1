#include "ui/server.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <string_view>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include <httplib.h>

#include "engine/core/error.hpp"
#include "ui/api.hpp"
#include "ui/assets.hpp"
#include "ui/connection_pool.hpp"
#include "ui/store.hpp"

namespace laconic::ui {
namespace {

using nlohmann::json;

// The page and its API speak only to their own origin; no inline script runs, whatever text a
// run name or an error holds.
constexpr const char* kPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

// Event streams a server keeps at once; each holds a thread of its pool. A page refused one
// polls instead.
constexpr int kMaxEventStreams = 32;

// Connections served at once (each on a thread of its own while it is open: ui/connection_pool.hpp),
// and of them from one address. A connection that sends nothing for kReadTimeout, or stays idle
// between requests for kKeepAlive, is closed; so is one a reader does not take a reply from
// within kWriteTimeout.
constexpr std::size_t kMaxConnections = 512;
constexpr std::size_t kMaxConnectionsPerClient = 256;
constexpr int kReadTimeout = 5, kWriteTimeout = 5, kKeepAlive = 5;
/// Seconds a stop waits for the connections still open before it shuts their sockets down.
constexpr int kStopGrace = 5;
// Requests one connection may make before it is closed (httplib's default is 5: every client
// then connects again and again).
constexpr std::size_t kKeepAliveRequests = 10000;

// Not compressed: httplib compresses "application/json" and "text/..." bodies with brotli at its
// highest quality when the browser accepts it (8 s for the 5 MB of 10,000 runs), which a server
// on this machine gains nothing from. It compares the type exactly, so a charset keeps it off.
constexpr const char* kJson = "application/json; charset=utf-8";

void send_json(httplib::Response& res, const json& body) {
  res.set_header("Cache-Control", "no-store");
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), kJson);
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  send_json(res, {{"error", message}});
}

// A request whose parameters are wrong: 400, where a missing run or experiment is 404.
struct BadRequest : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The whole of `text` as an integer; nothing when it is not one.
std::optional<std::int64_t> integer_of(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<std::int64_t> integer_param(const httplib::Request& req, const char* name) {
  if (!req.has_param(name)) return std::nullopt;
  const std::string text = req.get_param_value(name);
  const auto value = integer_of(text);
  if (!value) throw BadRequest(str_cat("parameter ", name, " must be an integer, got '", text, "'"));
  return value;
}

std::optional<double> number_param(const httplib::Request& req, const char* name) {
  if (!req.has_param(name) || req.get_param_value(name).empty()) return std::nullopt;
  const std::string text = req.get_param_value(name);
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(value))
    throw BadRequest(str_cat("parameter ", name, " must be a number, got '", text, "'"));
  return value;
}

// The run a path names (/api/runs/ID...).
std::int64_t run_id(const httplib::Request& req) {
  const std::string text = req.matches[1];
  const auto id = integer_of(text);
  if (!id) throw BadRequest("no such run: " + text);
  return *id;
}

SeriesQuery series_query(const httplib::Request& req) {
  SeriesQuery q;
  q.key = req.get_param_value("key");
  if (q.key.empty()) throw BadRequest("parameter key (a metric key, such as train_loss) is required");
  q.worker = static_cast<int>(integer_param(req, "worker").value_or(0));
  q.after_step = integer_param(req, "after_step");
  q.from = integer_param(req, "from");
  q.to = integer_param(req, "to");
  q.bytes = req.get_param_value("bytes") == "1";
  q.projected = req.get_param_value("projected") == "1";
  q.buckets = static_cast<std::size_t>(std::clamp<std::int64_t>(integer_param(req, "points").value_or(1000), 1, 20000));
  return q;
}

// GET /api/compare?runs=1,2&key=K&x=...&bands=0|1&points=N (compare_json).
CompareQuery compare_query(const httplib::Request& req) {
  CompareQuery q;
  q.key = req.get_param_value("key");
  if (q.key.empty()) throw BadRequest("parameter key (a metric key, such as train_loss) is required");
  const std::string runs = req.get_param_value("runs");
  for (std::size_t begin = 0; begin < runs.size();) {
    const std::size_t end = std::min(runs.find(',', begin), runs.size());
    const auto id = integer_of(std::string_view(runs).substr(begin, end - begin));
    if (!id) throw BadRequest(str_cat("parameter runs is run ids separated by commas, got '", runs, "'"));
    q.runs.push_back(*id);
    begin = end + 1;
  }
  if (q.runs.empty()) throw BadRequest("parameter runs (run ids separated by commas) is required");
  if (q.runs.size() > 64) throw BadRequest(str_cat("at most 64 runs are compared at once, got ", q.runs.size()));
  const std::string x = req.has_param("x") ? req.get_param_value("x") : "step";
  const std::pair<const char*, CompareX> axes[] = {
      {"step", CompareX::Step}, {"wall", CompareX::Wall}, {"bytes", CompareX::Bytes}, {"projected", CompareX::Projected}};
  const auto axis = std::find_if(std::begin(axes), std::end(axes), [&](const auto& a) { return x == a.first; });
  if (axis == std::end(axes)) throw BadRequest(str_cat("parameter x must be step, wall, bytes or projected, got '", x, "'"));
  q.x = axis->second;
  q.bands = req.get_param_value("bands") != "0";
  q.buckets = static_cast<std::size_t>(std::clamp<std::int64_t>(integer_param(req, "points").value_or(800), 1, 20000));
  return q;
}

// Runs `send`, turning what it throws into a status. A storage error says what happened to which
// file and what to do (a damaged one: the recover command), not the SQL that met it.
template <class Send>
void guarded(const ReadOnlyStore& store, httplib::Response& res, Send&& send) {
  try {
    send();
  } catch (const BadRequest& e) {
    send_error(res, 400, e.what());
  } catch (const ConfigError& e) {
    send_error(res, 404, e.what());
  } catch (const StorageError& e) {
    send_error(res, 503, storage::explain_storage_error(e.code(), e.what(), store.path()));
  } catch (const std::exception& e) {
    send_error(res, 500, e.what());
  }
}

// Runs a handler with a connection of its own and sends what it builds as JSON.
template <class Build>
void answer(ReadOnlyStore& store, httplib::Response& res, Build&& build) {
  guarded(store, res, [&] { send_json(res, store.with(build)); });
}

// After server_.stop(), every socket of the process is a client's connection (the listening one
// is closed): each is shut down, which ends the read its thread is blocked in.
void shut_down_sockets() {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", error)) {
    std::error_code ignored;
    const std::string target = std::filesystem::read_symlink(entry.path(), ignored).string();
    if (!target.starts_with("socket:")) continue;
    int fd = -1;
    const std::string name = entry.path().filename().string();
    std::from_chars(name.data(), name.data() + name.size(), fd);
    if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
  }
}

class UiServer {
 public:
  UiServer(const UiOptions& options, const std::atomic<bool>& stop) : store_(options.db), stop_(stop) {
    server_.set_socket_options([this](socket_t sock) {
      // Not httplib's default SO_REUSEPORT: a second server on the same port must be refused.
      int yes = 1;
      ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
      listening_socket_ = sock;
    });
    server_.set_default_headers({{"Content-Security-Policy", kPolicy},
                                 {"X-Content-Type-Options", "nosniff"},
                                 {"Referrer-Policy", "no-referrer"}});
    server_.set_read_timeout(kReadTimeout);
    server_.set_write_timeout(kWriteTimeout);
    server_.set_keep_alive_timeout(kKeepAlive);
    server_.set_keep_alive_max_count(kKeepAliveRequests);
    // A reply's headers and body go out in separate writes: with Nagle's algorithm on, the body
    // waited for the client's delayed acknowledgement, 40 ms a request on a kept-alive connection.
    server_.set_tcp_nodelay(true);
    // httplib owns the pool (it deletes it when listening ends); admit() is asked while it serves.
    server_.new_task_queue = [this] {
      pool_ = new ConnectionPool(kMaxConnections, kMaxConnectionsPerClient);
      return pool_.load();
    };
    routes();
  }

  void serve(const UiOptions& options, const std::function<void(const std::string&)>& on_listening) {
    const int port = options.port == 0 ? server_.bind_to_any_port(options.host)
                                       : (server_.bind_to_port(options.host, options.port) ? options.port : -1);
    if (port < 0)
      throw ConfigError(str_cat("cannot listen on ", options.host, ":", options.port,
                                ": the port is in use (another laconic ui?) or the address is not this machine's; "
                                "choose another with --port, or --port 0 for any free one"));
    // httplib listens with a backlog of 5 (compiled in): connections beyond it wait a second for
    // their SYN to be sent again. Listening again on the socket raises it.
    if (listening_socket_ >= 0) ::listen(listening_socket_, SOMAXCONN);
    std::thread listener([this] { server_.listen_after_bind(); });
    // The runs page's data built while the user opens the page: 1.8 s for 100,000 runs.
    std::thread warm([this] {
      httplib::Response ignored;
      send_all_runs(ignored);
    });
    on_listening(str_cat("http://", options.host == "0.0.0.0" ? "127.0.0.1" : options.host, ":", port, "/"));
    while (!stop_) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    stopping_ = true;
    server_.stop();
    // httplib waits for every connection's thread, and a client that keeps sending header bytes
    // resets each read's timeout: after kStopGrace its socket is shut down, so that the stop
    // takes seconds, not as long as the client likes.
    std::atomic<bool> stopped{false};
    std::thread cutter([&stopped] {
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(kStopGrace);
      while (!stopped && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (!stopped) shut_down_sockets();
    });
    listener.join();
    stopped = true;
    cutter.join();
    warm.join();
  }

 private:
  void routes() {
    // It never writes: every method but GET and HEAD is refused at once, whatever the path,
    // before any body is read (a request that sends none is not waited for).
    // A client with kMaxConnectionsPerClient connections open already is refused the next one.
    server_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (ConnectionPool* pool = pool_; pool != nullptr && !pool->admit(req.remote_addr)) {
        send_error(res, 503, str_cat("too many connections from ", req.remote_addr, " (at most ",
                                     kMaxConnectionsPerClient, " at once); try again when some have closed"));
        res.set_header("Connection", "close");
        return httplib::Server::HandlerResponse::Handled;
      }
      if (req.method == "GET" || req.method == "HEAD") return httplib::Server::HandlerResponse::Unhandled;
      send_error(res, 405, str_cat("laconic ui only reads: GET and HEAD, not ", req.method));
      res.set_header("Allow", "GET, HEAD");
      res.set_header("Connection", "close");
      return httplib::Server::HandlerResponse::Handled;
    });
    // Every other error says why in the same JSON as the API's own (a path no route serves).
    server_.set_error_handler(httplib::Server::HandlerWithResponse(
        [](const httplib::Request& req, httplib::Response& res) {
          if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
          send_error(res, res.status,
                     res.status == 404 ? str_cat("no such page: ", req.path) : std::string("the request was refused"));
          return httplib::Server::HandlerResponse::Handled;
        }));
    server_.Get("/", [](const httplib::Request&, httplib::Response& res) { send_asset(res, "index.html"); });
    server_.Get(R"(/assets/([A-Za-z0-9_.-]+))",
                [](const httplib::Request& req, httplib::Response& res) { send_asset(res, req.matches[1]); });
    server_.Get("/api/runs", [this](const httplib::Request& req, httplib::Response& res) {
      if (req.has_param("newest")) {
        const std::int64_t count = std::clamp<std::int64_t>(integer_param(req, "newest").value_or(0), 0, 100000);
        return answer(store_, res, [&](storage::Database& db) { return newest_runs_json(db, count); });
      }
      if (!req.has_param("since")) return send_all_runs(res);
      answer(store_, res, [&](storage::Database& db) { return runs_json(db, number_param(req, "since")); });
    });
    // A condition the user typed wrong is a bad request (400), not a missing resource.
    server_.Get("/api/runs/matching", [this](const httplib::Request& req, httplib::Response& res) {
      answer(store_, res, [&](storage::Database& db) {
        try {
          return runs_matching_json(db, req.get_param_value("where"));
        } catch (const ConfigError& e) {
          throw BadRequest(e.what());
        }
      });
    });
    server_.Get(R"(/api/runs/(\d+))", [this](const httplib::Request& req, httplib::Response& res) {
      answer(store_, res, [&](storage::Database& db) { return run_json(db, run_id(req)); });
    });
    server_.Get(R"(/api/runs/(\d+)/step_time)", [this](const httplib::Request& req, httplib::Response& res) {
      answer(store_, res, [&](storage::Database& db) { return step_time_json(db, run_id(req)); });
    });
    server_.Get(R"(/api/runs/(\d+)/series)", [this](const httplib::Request& req, httplib::Response& res) {
      answer(store_, res, [&](storage::Database& db) { return series_json(db, run_id(req), series_query(req)); });
    });
    server_.Get("/api/compare", [this](const httplib::Request& req, httplib::Response& res) {
      answer(store_, res, [&](storage::Database& db) { return compare_json(db, compare_query(req)); });
    });
    // A run id that is not a number (the routes above take digits only): 400 with the reason.
    server_.Get(R"(/api/runs/([^/]+)(/[a-z_]*)?)", [](const httplib::Request& req, httplib::Response& res) {
      send_error(res, 400, str_cat("a run id is a number (laconic runs lists them), not '", std::string(req.matches[1]), "'"));
    });
    server_.Get("/api/experiments",
                [this](const httplib::Request&, httplib::Response& res) {
                  answer(store_, res, [](storage::Database& db) { return experiments_json(db); });
                });
    server_.Get(R"(/api/experiments/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string name = req.matches[1];
      answer(store_, res, [&](storage::Database& db) { return experiment_json(db, name, number_param(req, "target")); });
    });
    server_.Get("/api/events", [this](const httplib::Request&, httplib::Response& res) { events(res); });
    // What a page without an event stream polls: the commits counted so far.
    server_.Get("/api/changes", [this](const httplib::Request&, httplib::Response& res) {
      send_json(res, {{"changes", store_.changes()}});
    });
  }

  // The cached list of every run when it is as of the latest commit seen; false when it is not.
  bool send_cached_runs(httplib::Response& res) {
    std::shared_ptr<const std::string> body;
    {
      std::lock_guard<std::mutex> lock(runs_mutex_);
      if (!runs_body_ || runs_changes_ != store_.changes()) return false;
      body = runs_body_;
    }
    res.set_header("Cache-Control", "no-store");
    res.set_content(*body, kJson);
    return true;
  }

  // Every run, as the runs page first asks: built once per commit the watcher has seen, so that
  // many pages (or clients) asking at once cost one query.
  void send_all_runs(httplib::Response& res) {
    if (send_cached_runs(res)) return;
    // One build at a time: a request that finds one under way waits for it, rather than doing it
    // again beside it (the build at start-up, or many pages after a commit).
    std::lock_guard<std::mutex> building(runs_build_mutex_);
    if (send_cached_runs(res)) return;
    const std::uint64_t changes = store_.changes();
    std::shared_ptr<const std::string> body;
    guarded(store_, res, [&] {
      body = std::make_shared<const std::string>(store_.with([](storage::Database& db) { return runs_json_text(db); }));
    });
    if (!body) return;  // an error, answered
    res.set_header("Cache-Control", "no-store");
    res.set_content(*body, kJson);
    std::lock_guard<std::mutex> lock(runs_mutex_);
    runs_body_ = std::move(body);
    runs_changes_ = changes;
  }

  static void send_asset(httplib::Response& res, const std::string& name) {
    const Asset* asset = find_asset(name);
    if (asset == nullptr) return send_error(res, 404, "no such file: " + name);
    res.set_header("Cache-Control", "no-cache");
    res.set_content(std::string(asset->bytes), std::string(asset->content_type));
  }

  // Server-sent events: "change" with the count of commits seen, whenever another process
  // commits; a comment every 2 s otherwise, which also finds a page that went away (the write
  // fails), so that its thread is free again.
  void events(httplib::Response& res) {
    if (++streams_ > kMaxEventStreams) {
      --streams_;
      return send_error(res, 503, "too many event streams open; the page polls instead");
    }
    res.set_header("Cache-Control", "no-store");
    res.set_chunked_content_provider(
        "text/event-stream",
        [this, seen = store_.changes(), first = true](std::size_t, httplib::DataSink& sink) mutable {
          if (first) {
            first = false;
            const std::string hello = str_cat("retry: 2000\nevent: change\ndata: ", seen, "\n\n");
            return sink.write(hello.data(), hello.size());
          }
          const auto waited = std::chrono::steady_clock::now();
          std::uint64_t now = seen;
          while (now == seen && !stopping_ && std::chrono::steady_clock::now() - waited < std::chrono::seconds(2))
            now = store_.wait_for_change(seen, std::chrono::milliseconds(500), stopping_);
          if (stopping_) {
            sink.done();
            return true;
          }
          const std::string message = now == seen ? ": still here\n\n" : str_cat("event: change\ndata: ", now, "\n\n");
          seen = now;
          return sink.write(message.data(), message.size());
        },
        [this](bool) { --streams_; });
  }

  ReadOnlyStore store_;
  std::mutex runs_mutex_, runs_build_mutex_;
  std::shared_ptr<const std::string> runs_body_;  // the last answer of /api/runs, as of runs_changes_
  std::uint64_t runs_changes_ = 0;
  std::atomic<ConnectionPool*> pool_{nullptr};
  socket_t listening_socket_ = -1;
  const std::atomic<bool>& stop_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> streams_{0};
  httplib::Server server_;
};

}  // namespace

void serve_ui(const UiOptions& options, const std::atomic<bool>& stop,
              const std::function<void(const std::string& url)>& on_listening) {
  UiServer(options, stop).serve(options, on_listening);
}

}  // namespace laconic::ui
