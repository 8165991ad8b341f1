#pragma once
// Opens a rendezvous store from its address (engine/comm/store.hpp). Here rather than in
// engine/comm because the TCP store is LibTorch's (c10d's TCPStore, the store torchrun hosts),
// and only engine/train and engine/ link LibTorch.
#include <chrono>
#include <memory>

#include "engine/comm/store.hpp"

namespace laconic::engine {

/// Who serves a TCP store: someone else (torchrun's agent, or rank 0 for the other ranks), or
/// this process (rank 0 under Slurm, MPI or the explicit flags, as PyTorch's env:// does).
/// File and Redis stores have no server of laconic's.
enum class StoreRole { Client, Server };

/// Connects to (or, as Server, starts) the store at `address`; CommError when it cannot be
/// reached within `timeout` (the server's port taken, the host unreachable).
std::shared_ptr<comm::KeyValueStore> open_store(const comm::StoreAddress& address, StoreRole role,
                                                std::chrono::milliseconds timeout);

}  // namespace laconic::engine
