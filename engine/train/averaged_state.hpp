#pragma once
// A joiner's optimizer state as the mean of the staying workers' (churn's join state "averaged",
// engine/train/worker.cpp).
#include <cstdint>
#include <vector>

#include "engine/comm/communicator.hpp"
#include "engine/train/optim/optimizer.hpp"

namespace laconic::train {

/// Every rank of `staying` (this one among them) calls it at the same point: their optimizer
/// states (Optimizer::state_tensors) are summed across them and divided by their count. Returns,
/// on rank 0, `optimizer`'s state serialized (save_state) with the mean in place of its own,
/// which it keeps; empty on the others.
std::vector<std::uint8_t> averaged_optimizer_state(Optimizer& optimizer, comm::Communicator& comm,
                                                   const std::vector<int>& staying);

}  // namespace laconic::train
