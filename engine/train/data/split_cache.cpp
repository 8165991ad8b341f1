#include "engine/train/data/split_cache.hpp"

#include <filesystem>
#include <map>
#include <mutex>

namespace laconic::train {

DataSplit cached_split(const std::string& key, const std::function<DataSplit()>& load) {
  static std::mutex mutex;
  static std::map<std::string, DataSplit> splits;
  std::lock_guard<std::mutex> lock(mutex);  // one load at a time: a second rank waits for the first
  auto found = splits.find(key);
  if (found == splits.end()) found = splits.emplace(key, load()).first;
  return found->second;
}

std::string file_key(const std::string& path) {
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  const auto modified = std::filesystem::last_write_time(path, error);
  if (error) return path + "\n\n";
  return path + "\n" + std::to_string(size) + "\n" + std::to_string(modified.time_since_epoch().count());
}

}  // namespace laconic::train
