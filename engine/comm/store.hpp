#pragma once
// Where the ranks of a run meet before Gloo connects them: a key-value store every rank can
// reach. One host's ranks use a private directory; ranks on several hosts use the TCP store
// torchrun hosts (c10d's TCPStore), a Redis server, or a directory on a shared file system
// (docs/multi-host.md).
#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace laconic::comm {

/// A store's address as users write it: "file:///DIR" (or a plain directory path),
/// "tcp://HOST:PORT", "redis://HOST:PORT".
struct StoreAddress {
  enum class Kind { File, Tcp, Redis };
  Kind kind = Kind::File;
  std::string path;  ///< the directory (File)
  std::string host;  ///< Tcp, Redis
  int port = 0;      ///< Tcp, Redis

  /// ConfigError naming the text and the three forms when it is none of them.
  static StoreAddress parse(const std::string& text);
  /// The address in the form parse() takes ("tcp://10.0.0.1:29500").
  std::string text() const;
};

/// What a rendezvous needs of a store. Keys are text; a key set again takes the new value.
/// Every wait is bounded: CommError names the keys still missing when the time is up.
class KeyValueStore {
 public:
  virtual ~KeyValueStore() = default;
  virtual void set(const std::string& key, const std::vector<char>& value) = 0;
  /// The value of `key`, waiting up to `timeout` for it to be set.
  virtual std::vector<char> get(const std::string& key, std::chrono::milliseconds timeout) = 0;
  /// Returns once every key is set; CommError after `timeout`.
  virtual void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;
  /// Whether `key` is set now, without waiting (an elastic run's members look every step).
  virtual bool check(const std::string& key);
};

/// A directory as a store: one file per key, written whole and renamed into place, so a reader
/// never sees half a value. Creates the directory when missing.
std::unique_ptr<KeyValueStore> open_file_store(const std::string& directory);

/// A Redis server as a store (SET with a 7-day expiry, so a server shared by many sweeps does
/// not fill up; GET polled every 10 ms while waiting). CommError when it cannot be reached
/// within `timeout`.
std::unique_ptr<KeyValueStore> open_redis_store(const std::string& host, int port, std::chrono::milliseconds timeout);

/// `store` seen with `prefix` before every key: the runs of a sweep share one store, each under
/// a prefix of its own.
std::unique_ptr<KeyValueStore> prefixed(std::shared_ptr<KeyValueStore> store, std::string prefix);

}  // namespace laconic::comm
