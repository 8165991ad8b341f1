#pragma once
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/option_fields.hpp"
#include "engine/train/data/dataset.hpp"

namespace laconic::train {

struct PerldocOptions {
  std::string root;  ///< "": Debian's perl-doc, /usr/share/perl/VERSION/pod
  std::int64_t context = 128;

  static OptionFields<PerldocOptions> fields();
};

/// The folder of .pod files `root` names; "" finds Debian's perl-doc (/usr/share/perl/VERSION/pod,
/// the newest VERSION). ConfigError naming the package to install when it holds no .pod file.
std::string perldoc_folder(const std::string& root);

/// The corpus decoded, and what went into it.
struct PerldocCorpus {
  std::array<std::string, 3> texts;  ///< training, validation, test: paragraphs, each ended by '\n'
  std::size_t files = 0;             ///< .pod files read
  std::size_t paragraphs = 0;        ///< of prose, repeats included
  std::size_t repeats = 0;           ///< paragraphs left out: seen before
  std::size_t repeated_bytes = 0;    ///< their bytes
};

/// The corpus's paragraphs, each on one line, split three ways: the .pod files of `folder` in
/// name order, their prose (pod_paragraphs), each paragraph kept the first time it appears (exact
/// repeats, mostly headings, left out), numbered across files; paragraph i is validation when
/// i % 20 == 18, test when i % 20 == 19, training otherwise (90/5/5, interleaved so that the three
/// cover the same documents). bench/perldoc_stats.cpp prints the counts.
PerldocCorpus perldoc_corpus(const std::string& folder);

/// An English corpus from a Debian package, for language models on byte tokens: the Perl
/// documentation of Debian's perl-doc (perlfaq, perlfunc, perlop, perlre, perlsyn, the release
/// notes...), its prose only, code left out (docs/models-and-data.md says what and why). Examples
/// are non-overlapping windows of `context` bytes (inputs [N, context] uint8, targets the same
/// shifted by one byte); vocabulary 256. Training evaluates on the validation split; the test
/// split is kept untouched. Decoded once, then kept in the split cache and on disk (decoded_cache).
class PerldocDataset : public Dataset {
 public:
  explicit PerldocDataset(PerldocOptions options) : options_(std::move(options)) {}
  std::string name() const override { return "perldoc"; }
  const DataSplit& train() override { return split(0); }
  const DataSplit& test() override { return split(2); }
  const DataSplit& evaluation() override { return split(1); }
  std::string evaluation_split() const override { return "validation"; }
  std::int64_t classes() const override;
  std::vector<std::int64_t> example_shape() const override { return {options_.context}; }
  std::int64_t sequence_length() const override { return options_.context; }
  std::string sequence_field() const override { return "context"; }
  bool cached() const override { return true; }
  double bytes_per_token() override { return 1.0; }

 private:
  const DataSplit& split(int which);

  PerldocOptions options_;
  std::optional<PerldocCorpus> corpus_;  ///< decoded only when a split is not cached
  std::optional<DataSplit> splits_[3];
};

}  // namespace laconic::train
