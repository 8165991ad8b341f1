#pragma once
// Large tensors whose pages are mapped in one go. A fresh tensor's memory is faulted in page by
// page as it is first written, and on the virtual machines this project runs on a fault costs
// about 12 us: 0.55 s for the 188 MB of Fashion-MNIST's training images as float, against 0.18 s
// when the kernel populates the whole mapping at once (MAP_POPULATE). Dataset readers write
// their splits into such tensors.
#include <vector>

#include <torch/torch.h>

namespace laconic::train {

/// An uninitialized contiguous CPU tensor of `shape` and `dtype` in an anonymous mapping whose
/// pages are populated up front (freed with munmap when the last tensor using it goes).
/// Small tensors, and a mapping the kernel refuses, come from torch::empty instead.
torch::Tensor populated_empty(const std::vector<std::int64_t>& shape, torch::Dtype dtype);

/// Maps the pages of a tensor's memory into this process's page tables now (MADV_POPULATE_READ),
/// so that no later read of it stops on a page fault. A forked worker inherits a file mapping
/// (a split from the decoded cache) but not its page tables: without this, its first epoch's
/// steps would take the faults. Does nothing for small tensors or where the kernel lacks it.
void populate_pages(const torch::Tensor& tensor);

}  // namespace laconic::train
