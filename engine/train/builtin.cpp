#include "engine/train/builtin.hpp"

#include "engine/train/fashion_mnist.hpp"
#include "engine/train/lenet5.hpp"
#include "engine/train/sgd.hpp"

namespace laconic::train {

Registry<Dataset> builtin_datasets() {
  Registry<Dataset> r("dataset");
  r.add<FashionMnistDataset, FashionMnistOptions>(
      "fashion_mnist", "Fashion-MNIST, 60k/10k 28x28 grey images, 10 classes (Debian package)");
  return r;
}

Registry<Model> builtin_models() {
  Registry<Model> r("model");
  r.add<Lenet5, Lenet5Options>("lenet5", "LeNet-5 CNN for 28x28 images, 61,706 parameters");
  return r;
}

Registry<Optimizer> builtin_optimizers() {
  Registry<Optimizer> r("optimizer");
  r.add<Sgd, SgdOptions>("sgd", "stochastic gradient descent with (Nesterov) momentum");
  return r;
}

}  // namespace laconic::train
