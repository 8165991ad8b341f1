#pragma once
// Reader of the IDX format of (Fashion-)MNIST, gzip-compressed or plain.
#include <string>

#include <torch/torch.h>

namespace laconic::train {

/// Reads an idx3 image file into a uint8 tensor [N, rows, cols]. ConfigError if the file is
/// missing or malformed (the message names the path and what was expected).
torch::Tensor read_idx_images(const std::string& path);

/// Reads an idx1 label file into an int64 tensor [N].
torch::Tensor read_idx_labels(const std::string& path);

}  // namespace laconic::train
