#include "engine/rendezvous_store.hpp"

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <mutex>

#include "engine/core/error.hpp"

namespace laconic::engine {
namespace {

// c10d's TCPStore through laconic's store interface; its errors (c10::Error, std::exception)
// become CommErrors that name the store. One call at a time on its connection: an elastic run's
// failure watch asks from a thread of its own, and LibTorch 1.13's client is not safe to share.
class TcpStore : public comm::KeyValueStore {
 public:
  TcpStore(const comm::StoreAddress& address, StoreRole role, std::chrono::milliseconds timeout)
      : where_(str_cat("TCP store ", address.host, ":", address.port)) {
    c10d::TCPStoreOptions options;
    options.port = static_cast<std::uint16_t>(address.port);
    options.isServer = role == StoreRole::Server;
    options.waitWorkers = false;  // the ranks meet through keys of their own
    options.timeout = timeout;
    try {
      store_ = std::make_unique<c10d::TCPStore>(address.host, options);
    } catch (const std::exception& e) {
      throw CommError(str_cat(role == StoreRole::Server ? "cannot serve the " : "cannot reach the ", where_, " within ",
                              timeout.count(), " ms: ", first_line(e.what())));
    }
  }

  void set(const std::string& key, const std::vector<char>& value) override {
    std::lock_guard<std::mutex> lock(mutex_);
    try {
      store_->set(key, std::vector<std::uint8_t>(value.begin(), value.end()));
    } catch (const std::exception& e) {
      throw CommError(str_cat(where_, ": set '", key, "' failed: ", first_line(e.what())));
    }
  }

  std::vector<char> get(const std::string& key, std::chrono::milliseconds timeout) override {
    wait({key}, timeout);
    std::lock_guard<std::mutex> lock(mutex_);
    try {
      const auto value = store_->get(key);
      return std::vector<char>(value.begin(), value.end());
    } catch (const std::exception& e) {
      throw CommError(str_cat(where_, ": get '", key, "' failed: ", first_line(e.what())));
    }
  }

  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override {
    std::lock_guard<std::mutex> lock(mutex_);
    try {
      store_->wait(keys, timeout);
    } catch (const std::exception& e) {
      std::string names;
      for (const auto& k : keys) names += (names.empty() ? "'" : ", '") + k + "'";
      throw CommError(
          str_cat(where_, ": ", names, " not all set within ", timeout.count(), " ms: ", first_line(e.what())));
    }
  }

 private:
  // c10::Error's text carries a C++ backtrace after its first line.
  static std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

  // Without waiting: c10d's wait takes a timeout of 0 for none at all.
  bool check(const std::string& key) override {
    std::lock_guard<std::mutex> lock(mutex_);
    try {
      return store_->check({key});
    } catch (const std::exception& e) {
      throw CommError(str_cat(where_, ": check '", key, "' failed: ", first_line(e.what())));
    }
  }

  std::string where_;
  std::unique_ptr<c10d::TCPStore> store_;
  std::mutex mutex_;
};

}  // namespace

std::shared_ptr<comm::KeyValueStore> open_store(const comm::StoreAddress& address, StoreRole role,
                                                std::chrono::milliseconds timeout) {
  switch (address.kind) {
    case comm::StoreAddress::Kind::Tcp:
      return std::make_shared<TcpStore>(address, role, timeout);
    case comm::StoreAddress::Kind::Redis:
      return comm::open_redis_store(address.host, address.port, timeout);
    case comm::StoreAddress::Kind::File:
      break;
  }
  return comm::open_file_store(address.path);
}

}  // namespace laconic::engine
