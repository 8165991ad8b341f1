#include "engine/train/data/perldoc.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_set>

#include "engine/core/error.hpp"
#include "engine/train/data/decoded_cache.hpp"
#include "engine/train/data/pod_text.hpp"
#include "engine/train/data/split_cache.hpp"
#include "engine/train/data/text.hpp"
#include "engine/train/data/token_windows.hpp"

namespace laconic::train {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSplitNames[3] = {"training", "validation", "test"};

std::vector<std::string> pod_files(const std::string& folder) {
  std::vector<std::string> files;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(folder, error))
    if (entry.path().extension() == ".pod" && entry.is_regular_file(error)) files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(str_cat("perldoc: cannot read '", path, "'"));
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

OptionFields<PerldocOptions> PerldocOptions::fields() {
  using O = PerldocOptions;
  return OptionFields<O>()
      .text("root", &O::root,
            "folder of .pod files; \"\" = Debian's perl-doc (/usr/share/perl/VERSION/pod, apt-get install perl-doc)")
      .integer("context", &O::context, "bytes per example; must equal the model's context", at_least(1))
      .rule([](const ComponentSpec&, O& o) {
        // Checked when the experiment is loaded, so a missing corpus stops the run before any worker.
        (void)perldoc_folder(o.root);
      });
}

std::string perldoc_folder(const std::string& root) {
  std::string folder = root;
  if (folder.empty()) {
    std::error_code error;
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator("/usr/share/perl", error))
      if (fs::is_directory(entry.path() / "pod", error)) found.push_back((entry.path() / "pod").string());
    std::sort(found.begin(), found.end());
    if (!found.empty()) folder = found.back();
  }
  if (folder.empty() || pod_files(folder).empty())
    throw ConfigError(str_cat("perldoc: no .pod files in ", root.empty() ? "/usr/share/perl/VERSION/pod" : "'" + root + "'",
                              "; install the Debian package perl-doc (apt-get install perl-doc), or point "
                              "perldoc { root = ... } at a folder of .pod files"));
  return folder;
}

PerldocCorpus perldoc_corpus(const std::string& folder) {
  PerldocCorpus corpus;
  std::unordered_set<std::string> seen;
  std::size_t index = 0;
  for (const std::string& file : pod_files(folder)) {
    ++corpus.files;
    for (const std::string& paragraph : pod_paragraphs(read_file(file))) {
      ++corpus.paragraphs;
      // Each paragraph once: the headings and boilerplate that recur across documents
      // ("DESCRIPTION", the release notes' bug-reporting paragraph) would otherwise be in
      // training and validation alike.
      if (!seen.insert(paragraph).second) {
        ++corpus.repeats;
        corpus.repeated_bytes += paragraph.size() + 1;
        continue;
      }
      const std::size_t slot = index++ % 20;
      std::string& text = corpus.texts[slot == 18 ? 1 : slot == 19 ? 2 : 0];
      text.append(paragraph).push_back('\n');
    }
  }
  return corpus;
}

std::int64_t PerldocDataset::classes() const { return kByteVocabulary; }

const DataSplit& PerldocDataset::split(int which) {
  if (splits_[which]) return *splits_[which];
  const std::string folder = perldoc_folder(options_.root);
  std::ostringstream name, key;
  name << "perldoc\n" << folder << "\n" << kSplitNames[which] << "\n" << options_.context;
  key << name.str();
  for (const std::string& file : pod_files(folder)) key << "\n" << file_key(file);
  auto decode = [&] {
    if (!corpus_) corpus_ = perldoc_corpus(folder);
    std::string& text = corpus_->texts[static_cast<std::size_t>(which)];
    const auto stream =
        torch::from_blob(text.data(), {static_cast<std::int64_t>(text.size())}, torch::kUInt8);
    return token_windows(stream, options_.context, str_cat("perldoc's ", kSplitNames[which], " split"));
  };
  splits_[which] = cached_split(key.str(), [&] { return decoded_split({name.str(), key.str()}, decode); });
  return *splits_[which];
}

}  // namespace laconic::train
