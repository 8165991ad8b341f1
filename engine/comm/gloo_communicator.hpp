#pragma once
// The Communicator over Gloo's TCP transport; rendezvous through a store in a shared directory.
#include <chrono>
#include <memory>
#include <string>

#include "engine/comm/communicator.hpp"

namespace laconic::comm {

struct GlooOptions {
  int rank = 0;
  int size = 1;
  std::string store_dir;                      ///< directory of Gloo's FileStore, private to the run
  std::string hostname = "127.0.0.1";         ///< address this rank listens on
  std::chrono::milliseconds timeout{60'000};  ///< limit for rendezvous and for every transfer
};

class GlooCommunicator : public Communicator {
 public:
  /// Rendezvous with the other ranks and connect a full mesh; CommError on timeout.
  explicit GlooCommunicator(const GlooOptions& options);
  ~GlooCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }

 protected:
  void transfer(int to, std::span<const std::uint8_t> send, std::uint64_t send_tag, int from,
                std::span<std::uint8_t> recv, std::uint64_t recv_tag) override;
  int transfer_from_any(std::span<const int> from, std::span<std::uint8_t> recv,
                        std::uint64_t tag) override;

 private:
  struct Impl;  // keeps Gloo's headers out of the engine's public interface
  int rank_;
  int size_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace laconic::comm
