#pragma once
#include "engine/core/registry.hpp"
#include "engine/topology/topology.hpp"

namespace laconic::topology {

/// Every built-in topology, one registration line each (engine/topology/builtin.cpp).
Registry<Topology> builtin_topologies();

}  // namespace laconic::topology
