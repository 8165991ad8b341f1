#pragma once
#include "engine/core/registry.hpp"
#include "engine/train/dataset.hpp"
#include "engine/train/model.hpp"
#include "engine/train/optimizer.hpp"

namespace laconic::train {

/// Built-in datasets, models and optimizers, one registration line each (builtin.cpp).
Registry<Dataset> builtin_datasets();
Registry<Model> builtin_models();
Registry<Optimizer> builtin_optimizers();

}  // namespace laconic::train
