#include "engine/comm/store.hpp"

#include <hiredis/hiredis.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <thread>

#include "engine/core/error.hpp"

namespace laconic::comm {
namespace {

using Clock = std::chrono::steady_clock;

std::string join_keys(const std::vector<std::string>& keys) {
  std::string out;
  for (const auto& k : keys) out += (out.empty() ? "'" : ", '") + k + "'";
  return out;
}

// "HOST:PORT" into its parts; false when the port is not a number in 1..65535.
bool split_host_port(const std::string& text, std::string& host, int& port) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  char* end = nullptr;
  const long value = std::strtol(text.c_str() + colon + 1, &end, 10);
  if (end == text.c_str() + colon + 1 || *end != '\0' || value < 1 || value > 65535) return false;
  port = static_cast<int>(value);
  return true;
}

class FileStore : public KeyValueStore {
 public:
  explicit FileStore(std::string directory) : directory_(std::move(directory)) {
    std::error_code error;
    std::filesystem::create_directories(directory_, error);
    if (!std::filesystem::is_directory(directory_))
      throw CommError(str_cat("store directory '", directory_, "' cannot be created: ", error.message()));
  }

  void set(const std::string& key, const std::vector<char>& value) override {
    const auto path = path_of(key);
    // Unique per process and call, so two writers of one key never share a temporary file.
    const auto temporary = path.string() + str_cat(".tmp-", ::getpid(), "-", counter_++);
    {
      std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
      out.write(value.data(), static_cast<std::streamsize>(value.size()));
      if (!out) throw CommError(str_cat("store: cannot write '", temporary, "': ", std::strerror(errno)));
    }
    std::error_code error;
    std::filesystem::rename(temporary, path, error);
    if (error)
      throw CommError(str_cat("store: cannot rename '", temporary, "' to '", path.string(), "': ", error.message()));
  }

  std::vector<char> get(const std::string& key, std::chrono::milliseconds timeout) override {
    wait({key}, timeout);
    std::ifstream in(path_of(key), std::ios::binary);
    return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  bool check(const std::string& key) override { return std::filesystem::exists(path_of(key)); }

  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override {
    const auto deadline = Clock::now() + timeout;
    for (const auto& key : keys)
      while (!std::filesystem::exists(path_of(key))) {
        if (Clock::now() > deadline)
          throw CommError(
              str_cat("store '", directory_, "': ", join_keys(keys), " not all set within ", timeout.count(), " ms"));
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
  }

 private:
  // Keys may hold '/', which would make directories: it becomes "%2F" (and '%' itself "%25").
  std::filesystem::path path_of(const std::string& key) const {
    std::string name;
    for (char c : key) name += c == '/' ? std::string("%2F") : c == '%' ? std::string("%25") : std::string(1, c);
    return std::filesystem::path(directory_) / name;
  }

  std::string directory_;
  unsigned counter_ = 0;
};

class RedisStore : public KeyValueStore {
 public:
  RedisStore(const std::string& host, int port, std::chrono::milliseconds timeout) : host_(host), port_(port) {
    const timeval limit{static_cast<time_t>(timeout.count() / 1000),
                        static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
    redis_ = ::redisConnectWithTimeout(host.c_str(), port, limit);
    if (redis_ == nullptr || redis_->err != 0) {
      const std::string why = redis_ ? redis_->errstr : "out of memory";
      if (redis_) ::redisFree(redis_);
      throw CommError(str_cat("cannot reach the Redis store at ", host, ":", port, ": ", why));
    }
  }
  ~RedisStore() override { ::redisFree(redis_); }
  RedisStore(const RedisStore&) = delete;
  RedisStore& operator=(const RedisStore&) = delete;

  void set(const std::string& key, const std::vector<char>& value) override {
    Reply reply(command("SET %b %b EX 604800", key.data(), key.size(), value.data(), value.size()));
    if (reply->type == REDIS_REPLY_ERROR) throw CommError(str_cat(where(), ": SET '", key, "' failed: ", reply->str));
  }

  std::vector<char> get(const std::string& key, std::chrono::milliseconds timeout) override {
    const auto deadline = Clock::now() + timeout;
    while (true) {
      Reply reply(command("GET %b", key.data(), key.size()));
      if (reply->type == REDIS_REPLY_STRING) return std::vector<char>(reply->str, reply->str + reply->len);
      if (reply->type == REDIS_REPLY_ERROR) throw CommError(str_cat(where(), ": GET '", key, "' failed: ", reply->str));
      if (Clock::now() > deadline)
        throw CommError(str_cat(where(), ": '", key, "' not set within ", timeout.count(), " ms"));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override {
    const auto deadline = Clock::now() + timeout;
    for (const auto& key : keys) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      try {
        get(key, std::max(left, std::chrono::milliseconds(0)));
      } catch (const CommError&) {
        throw CommError(str_cat(where(), ": ", join_keys(keys), " not all set within ", timeout.count(), " ms"));
      }
    }
  }

 private:
  struct FreeReply {
    void operator()(redisReply* r) const { ::freeReplyObject(r); }
  };
  using Reply = std::unique_ptr<redisReply, FreeReply>;

  // One command at a time on the connection: an elastic run's failure watch asks from a thread
  // of its own (hiredis's context is not safe to share).
  template <class... Args>
  redisReply* command(const char* format, Args... args) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto* reply = static_cast<redisReply*>(::redisCommand(redis_, format, args...));
    if (reply == nullptr) throw CommError(str_cat(where(), ": connection lost: ", redis_->errstr));
    return reply;
  }
  std::string where() const { return str_cat("Redis store ", host_, ":", port_); }

  std::string host_;
  int port_;
  redisContext* redis_ = nullptr;
  std::mutex mutex_;
};

class PrefixedStore : public KeyValueStore {
 public:
  PrefixedStore(std::shared_ptr<KeyValueStore> store, std::string prefix)
      : store_(std::move(store)), prefix_(std::move(prefix)) {}
  void set(const std::string& key, const std::vector<char>& value) override { store_->set(prefix_ + key, value); }
  std::vector<char> get(const std::string& key, std::chrono::milliseconds timeout) override {
    return store_->get(prefix_ + key, timeout);
  }
  bool check(const std::string& key) override { return store_->check(prefix_ + key); }
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override {
    std::vector<std::string> full;
    for (const auto& k : keys) full.push_back(prefix_ + k);
    store_->wait(full, timeout);
  }

 private:
  std::shared_ptr<KeyValueStore> store_;
  std::string prefix_;
};

}  // namespace

bool KeyValueStore::check(const std::string& key) {
  try {
    wait({key}, std::chrono::milliseconds(0));
    return true;
  } catch (const CommError&) {
    return false;
  }
}

StoreAddress StoreAddress::parse(const std::string& text) {
  StoreAddress address;
  const auto bad = [&] {
    return ConfigError(str_cat("store address '", text,
                               "' is none of file:///DIR, tcp://HOST:PORT, "
                               "redis://HOST:PORT (or a directory path)"));
  };
  if (text.starts_with("tcp://") || text.starts_with("redis://")) {
    address.kind = text.starts_with("tcp://") ? Kind::Tcp : Kind::Redis;
    const std::string rest = text.substr(text.find("://") + 3);
    if (!split_host_port(rest, address.host, address.port)) throw bad();
    return address;
  }
  if (text.starts_with("file://")) {
    address.path = text.substr(7);
    if (address.path.empty() || address.path.front() != '/') throw bad();
    return address;
  }
  if (text.empty() || text.find("://") != std::string::npos) throw bad();
  address.path = text;
  return address;
}

std::string StoreAddress::text() const {
  switch (kind) {
    case Kind::Tcp:
      return str_cat("tcp://", host, ":", port);
    case Kind::Redis:
      return str_cat("redis://", host, ":", port);
    case Kind::File:
      break;
  }
  return path.starts_with("/") ? "file://" + path : path;
}

std::unique_ptr<KeyValueStore> open_file_store(const std::string& directory) {
  return std::make_unique<FileStore>(directory);
}

std::unique_ptr<KeyValueStore> open_redis_store(const std::string& host, int port, std::chrono::milliseconds timeout) {
  return std::make_unique<RedisStore>(host, port, timeout);
}

std::unique_ptr<KeyValueStore> prefixed(std::shared_ptr<KeyValueStore> store, std::string prefix) {
  return std::make_unique<PrefixedStore>(std::move(store), std::move(prefix));
}

}  // namespace laconic::comm
