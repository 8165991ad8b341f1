#include "engine/train/data/text.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "engine/core/error.hpp"
#include "engine/train/data/token_windows.hpp"

namespace laconic::train {
namespace {

constexpr const char* kUnk = "<unk>";
constexpr const char* kEos = "<eos>";
constexpr const char* kSuffixes[3] = {".train.txt", ".valid.txt", ".test.txt"};

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(str_cat("cannot open text corpus '", path, "'"));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(std::move(line));
  return lines;
}

template <class F>
void for_each_word(const std::string& line, F&& f) {
  std::istringstream words(line);
  for (std::string word; words >> word;) f(word);
}

bool is_triple(const std::string& file) {
  if (std::filesystem::is_regular_file(file)) return false;
  for (const char* suffix : kSuffixes)
    if (!std::filesystem::is_regular_file(file + suffix))
      throw ConfigError(str_cat("text.file: neither '", file, "' nor '", file, suffix,
                                "' exists (give a corpus file, split 80/10/10 by lines, or the "
                                "prefix of <file>.train.txt, <file>.valid.txt, <file>.test.txt)"));
  return true;
}

}  // namespace

OptionFields<TextOptions> TextOptions::fields() {
  using O = TextOptions;
  return OptionFields<O>()
      .text("file", &O::file,
            "corpus file (split 80/10/10 by lines), or the prefix P of P.train.txt, P.valid.txt, P.test.txt")
      .choice("tokens", &O::tokens,
              "what a token is: a word (vocabulary from the training split) or a byte (vocabulary 256)",
              {{TextTokens::Words, "words"}, {TextTokens::Bytes, "bytes"}})
      .integer("vocab", &O::vocab,
               "vocabulary size: unknown-word and end-of-line tokens, and the vocab - 2 commonest training words; "
               "256 for byte tokens")
      .integer("bptt", &O::bptt, "tokens per example; must equal the model's bptt", at_least(1))
      .rule([](const ComponentSpec& spec, O& o) {
        if (o.file.empty())
          throw ConfigError(str_cat(spec.name, ".file must name a corpus: text { file = \"corpus.txt\" }"));
        if (o.vocab < 3) throw out_of_range(spec, "vocab", ">= 3 (<unk>, <eos> and a word)", str_cat(o.vocab));
        if (o.tokens == TextTokens::Bytes && o.vocab != TextOptions{}.vocab && o.vocab != kByteVocabulary)
          throw ConfigError(str_cat(spec.name, ".vocab = ", o.vocab, " with tokens = \"bytes\": byte tokens have a "
                                    "vocabulary of ", kByteVocabulary, "; leave vocab out"));
        // Checked when the experiment is loaded, so a missing corpus stops the run before any worker.
        (void)is_triple(o.file);
      });
}

void TextDataset::read_splits() {
  if (split_lines_[0]) return;
  if (is_triple(options_.file)) {
    for (int s = 0; s < 3; ++s) split_lines_[s] = read_lines(options_.file + kSuffixes[s]);
    return;
  }
  auto lines = read_lines(options_.file);
  const auto n = lines.size();
  const std::size_t train_end = n * 8 / 10, valid_end = n * 9 / 10;
  split_lines_[0] = std::vector<std::string>(lines.begin(), lines.begin() + train_end);
  split_lines_[1] = std::vector<std::string>(lines.begin() + train_end, lines.begin() + valid_end);
  split_lines_[2] = std::vector<std::string>(lines.begin() + valid_end, lines.end());
}

void TextDataset::build_vocabulary() {
  if (!words_.empty() || options_.tokens == TextTokens::Bytes) return;
  read_splits();
  std::unordered_map<std::string, std::int64_t> counts;
  for (const std::string& line : *split_lines_[0])
    for_each_word(line, [&](const std::string& word) {
      if (word != kUnk && word != kEos) ++counts[word];
    });
  std::vector<std::pair<std::string, std::int64_t>> ranked(counts.begin(), counts.end());
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  const auto keep = std::min<std::size_t>(ranked.size(), static_cast<std::size_t>(options_.vocab - 2));
  words_ = {kUnk, kEos};
  for (std::size_t i = 0; i < keep; ++i) words_.push_back(ranked[i].first);
  for (std::size_t i = 0; i < words_.size(); ++i) ids_[words_[i]] = static_cast<std::int64_t>(i);
}

const std::vector<std::string>& TextDataset::words() {
  build_vocabulary();
  return words_;
}

torch::Tensor TextDataset::stream(const std::vector<std::string>& lines) {
  if (options_.tokens == TextTokens::Bytes) {
    std::string bytes;
    for (const std::string& line : lines) bytes.append(line).push_back('\n');
    return torch::from_blob(bytes.data(), {static_cast<std::int64_t>(bytes.size())}, torch::kUInt8).clone();
  }
  build_vocabulary();
  std::vector<std::int64_t> tokens;
  for (const std::string& line : lines) {
    for_each_word(line, [&](const std::string& word) {
      const auto it = ids_.find(word);
      tokens.push_back(it == ids_.end() ? 0 : it->second);
    });
    tokens.push_back(1);  // <eos>
  }
  return torch::from_blob(tokens.data(), {static_cast<std::int64_t>(tokens.size())}, torch::kInt64).clone();
}

DataSplit TextDataset::windows(const std::vector<std::string>& lines, const char* split) {
  return token_windows(stream(lines), options_.bptt, str_cat("text corpus '", options_.file, "', ", split, " split"));
}

double TextDataset::bytes_per_token() {
  if (options_.tokens == TextTokens::Bytes) return 1.0;
  if (bytes_per_token_) return *bytes_per_token_;  // asked at every evaluation: counted once
  read_splits();
  double bytes = 0, tokens = 0;
  for (const std::string& line : *split_lines_[2]) {
    bytes += static_cast<double>(line.size() + 1);
    for_each_word(line, [&](const std::string&) { ++tokens; });
    ++tokens;  // <eos>
  }
  bytes_per_token_ = tokens > 0 ? bytes / tokens : 0.0;
  return *bytes_per_token_;
}

const DataSplit& TextDataset::train() {
  if (!train_) {
    read_splits();
    train_ = windows(*split_lines_[0], "training");
  }
  return *train_;
}

const DataSplit& TextDataset::valid() {
  if (!valid_) {
    read_splits();
    valid_ = windows(*split_lines_[1], "validation");
  }
  return *valid_;
}

const DataSplit& TextDataset::test() {
  if (!test_) {
    read_splits();
    test_ = windows(*split_lines_[2], "test");
  }
  return *test_;
}

}  // namespace laconic::train
