#pragma once
// Compressors that act as one towards the worker loop: an overlapped exchange gives every bucket
// of the gradient a compressor of the run's kind (engine/topology/bucketed_exchange.hpp), and the
// loop tells them, as one, what it tells the run's compressor: the epoch, the step, and their
// state in checkpoints.
#include <memory>
#include <vector>

#include "engine/compress/compressor.hpp"

namespace laconic::compress {

class CompressorGroup : public Compressor {
 public:
  explicit CompressorGroup(std::vector<std::unique_ptr<Compressor>> members) : members_(std::move(members)) {}

  /// The members, in order (bucket b's is members()[b]).
  Compressor& operator[](std::size_t i) const { return *members_[i]; }
  std::size_t size() const { return members_.size(); }

  /// Each member's own name and capabilities stand; the group's are its first member's.
  std::string name() const override { return members_.front()->name(); }
  Capabilities capabilities() const override { return members_.front()->capabilities(); }
  const WireCodec* transit_codec() const override { return members_.front()->transit_codec(); }

  void set_seed(std::uint64_t run_seed, int rank) override {
    for (const auto& m : members_) m->set_seed(run_seed, rank);
  }
  void save_state(StateWriter& out) const override {
    for (const auto& m : members_) m->save_state(out);
  }
  void load_state(StateReader& in) override {
    for (const auto& m : members_) m->load_state(in);
  }

  /// Not used: the members compress their own parts (InvariantError).
  void compress(std::span<const float> gradient, Payload& payload) override;
  void decompress_add(const Payload& payload, std::span<float> dense) const override;

 protected:
  void on_step(const StepPoint& point) override {
    for (const auto& m : members_) m->advance(point);
  }

 private:
  std::vector<std::unique_ptr<Compressor>> members_;
};

}  // namespace laconic::compress
