#pragma once
// The exception hierarchy of laconic. Three families, so callers can tell who can fix a failure:
// ConfigError (the experiment file or a flag), CommError (a peer, a timeout), StorageError
// (SQLite, keeping its result code). Each stage on the way up adds context with add_context().
#include <sstream>
#include <stdexcept>
#include <string>

namespace laconic {

/// Base of every laconic exception; what() is the message with all added context.
class Error : public std::exception {
 public:
  explicit Error(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }
  /// Prefixes the message: "while building topology 'gossip': <message>".
  void add_context(const std::string& context) { message_ = context + ": " + message_; }

 private:
  std::string message_;
};

/// The user can fix it: bad experiment, unknown name, out-of-range field, missing dataset.
class ConfigError : public Error {
 public:
  using Error::Error;
};

/// A peer went away, a collective timed out, a rendezvous failed.
class CommError : public Error {
 public:
  using Error::Error;
};

/// SQLite failed; code() is SQLite's result code (or -1 when the error is laconic's own).
class StorageError : public Error {
 public:
  StorageError(std::string message, int code) : Error(std::move(message)), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

/// Training diverged: the loss became NaN or infinite, or grew past the run's
/// divergence_factor times its first value. The run ends DIVERGED, not FAILED.
class DivergedError : public Error {
 public:
  using Error::Error;
};

/// The user stopped laconic (Ctrl-C, SIGTERM) while it waited on something else: the message
/// says on what and for how long. laconic exits with status 130, as after a stopped sweep.
class StoppedError : public Error {
 public:
  using Error::Error;
};

/// An internal invariant broke: a laconic bug, not the user's.
class InvariantError : public Error {
 public:
  using Error::Error;
};

namespace detail {
inline void append_all(std::ostringstream&) {}
template <class T, class... Rest>
void append_all(std::ostringstream& out, const T& first, const Rest&... rest) {
  out << first;
  append_all(out, rest...);
}
}  // namespace detail

/// Concatenates all arguments with operator<<, for error messages that carry their values.
template <class... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream out;
  detail::append_all(out, args...);
  return out.str();
}

}  // namespace laconic

/// Checks an invariant; the message should carry both values: ("expected ", n, " bytes, got ", m).
#define LACONIC_ENFORCE(cond, ...)                                                                       \
  do {                                                                                                   \
    if (!(cond))                                                                                         \
      throw ::laconic::InvariantError(                                                                   \
          ::laconic::str_cat(__FILE__, ":", __LINE__, ": ", "check '" #cond "' failed: ", __VA_ARGS__)); \
  } while (0)
