#pragma once
#include "engine/core/registry.hpp"
#include "engine/train/data/dataset.hpp"
#include "engine/train/models/model.hpp"
#include "engine/train/optim/optimizer.hpp"

namespace laconic::train {

/// Built-in datasets, models and optimizers, one registration line each (builtin.cpp).
Registry<Dataset> builtin_datasets();
Registry<Model> builtin_models();
Registry<Optimizer> builtin_optimizers();

}  // namespace laconic::train
