#pragma once
// LACONIC_CACHE_DIR (engine/train/data/decoded_cache.hpp) set for one test's scope.
#include <cstdlib>
#include <optional>
#include <string>

namespace laconic::testing {

/// Sets LACONIC_CACHE_DIR for the scope of the test, then restores it.
class CacheDirSetting {
 public:
  explicit CacheDirSetting(const std::string& value) {
    if (const char* old = std::getenv("LACONIC_CACHE_DIR")) old_ = old;
    ::setenv("LACONIC_CACHE_DIR", value.c_str(), 1);
  }
  ~CacheDirSetting() {
    if (old_)
      ::setenv("LACONIC_CACHE_DIR", old_->c_str(), 1);
    else
      ::unsetenv("LACONIC_CACHE_DIR");
  }
  CacheDirSetting(const CacheDirSetting&) = delete;
  CacheDirSetting& operator=(const CacheDirSetting&) = delete;

 private:
  std::optional<std::string> old_;
};

}  // namespace laconic::testing
