#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/option_fields.hpp"
#include "engine/train/data/dataset.hpp"

namespace laconic::train {

/// What a text's tokens are: its words (a vocabulary built from the training split) or its bytes.
enum class TextTokens { Words, Bytes };

struct TextOptions {
  std::string file;
  TextTokens tokens = TextTokens::Words;
  std::int64_t vocab = 10000;
  std::int64_t bptt = 35;

  static OptionFields<TextOptions> fields();
};

/// The vocabulary of byte tokens.
inline constexpr std::int64_t kByteVocabulary = 256;

/// A corpus for language modelling. Word tokens (`tokens = "words"`) are the whitespace-separated
/// words of each line, followed by <eos>; byte tokens (`tokens = "bytes"`) are the split's bytes,
/// each line followed by '\n' (vocabulary 256: no tokenizer). Splits: when `file` exists, its lines 80/10/10 in order (first
/// 80% train, next 10% valid, last 10% test, by line count); otherwise the triple
/// `<file>.train.txt`, `<file>.valid.txt`, `<file>.test.txt` (Penn Treebank's and WikiText's
/// layout: file = ".../ptb" for ptb.train.txt). The vocabulary comes from the training split:
/// id 0 is <unk>, id 1 <eos>, then the vocab - 2 most frequent words (ties in byte order);
/// every other word (and a literal <unk> in the corpus) becomes <unk>. Each split's tokens,
/// concatenated, are cut into non-overlapping windows of bptt (token_windows): inputs [N, bptt]
/// (int64 words, uint8 bytes) and targets [N, bptt] = the same window shifted by one token.
class TextDataset : public Dataset {
 public:
  explicit TextDataset(TextOptions options) : options_(std::move(options)) {}
  std::string name() const override { return "text"; }
  const DataSplit& train() override;
  const DataSplit& test() override;
  /// The validation split (not used by the worker loop, which evaluates on test).
  const DataSplit& valid();
  /// The configured vocab: ids are below it (fewer words in the corpus leave ids unused); 256
  /// for byte tokens.
  std::int64_t classes() const override {
    return options_.tokens == TextTokens::Bytes ? kByteVocabulary : options_.vocab;
  }
  /// 1 for bytes; for words, the test split's bytes (each line's and its end of line) over its tokens.
  double bytes_per_token() override;
  std::vector<std::int64_t> example_shape() const override { return {options_.bptt}; }
  std::int64_t sequence_length() const override { return options_.bptt; }

  /// The words by id (<unk>, <eos>, then by frequency); builds the vocabulary if needed.
  const std::vector<std::string>& words();

 private:
  /// The lines of each split (train, valid, test), read once.
  void read_splits();
  void build_vocabulary();
  /// The split's tokens as one stream: int64 word ids, or uint8 bytes.
  torch::Tensor stream(const std::vector<std::string>& lines);
  DataSplit windows(const std::vector<std::string>& lines, const char* split);

  TextOptions options_;
  std::optional<std::vector<std::string>> split_lines_[3];
  std::vector<std::string> words_;
  std::map<std::string, std::int64_t> ids_;
  std::optional<DataSplit> train_, valid_, test_;
  std::optional<double> bytes_per_token_;
};

}  // namespace laconic::train
