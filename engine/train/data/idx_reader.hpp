#pragma once
// Reader of the IDX format of (Fashion-)MNIST, gzip-compressed or plain.
#include <string>

#include <torch/torch.h>

#include "engine/train/data/dataset.hpp"

namespace laconic::train {

/// Reads an idx3 image file into a uint8 tensor [N, rows, cols]. ConfigError if the file is
/// missing or malformed (the message names the path and what was expected).
torch::Tensor read_idx_images(const std::string& path);

/// Reads an idx1 label file into an int64 tensor [N].
torch::Tensor read_idx_labels(const std::string& path);

/// `root/base.gz` or `root/base`, whichever exists (gzipped first); otherwise a ConfigError
/// "<dataset> file '<base>' not found in '<root>': <hint>".
std::string find_idx_file(const std::string& root, const std::string& base, const std::string& dataset,
                          const std::string& hint);

/// An image file and its label file as a split: inputs [N, 1, rows, cols] float32 scaled to
/// [0, 1] then standardized with (mean, deviation); labels [N] int64. `dataset` names it in
/// errors.
DataSplit read_idx_split(const std::string& images_path, const std::string& labels_path, float mean, float deviation,
                         const std::string& dataset);

}  // namespace laconic::train
