#include "engine/train/builtin.hpp"

#include "engine/core/error.hpp"

#include "engine/train/optim/adam.hpp"
#include "engine/train/optim/demo.hpp"
#include "engine/train/optim/onebit_adam.hpp"
#include "engine/train/data/cifar10.hpp"
#include "engine/train/data/fashion_mnist.hpp"
#include "engine/train/optim/lamb.hpp"
#include "engine/train/models/gpt.hpp"
#include "engine/train/models/lenet5.hpp"
#include "engine/train/models/lstm_lm.hpp"
#include "engine/train/models/mlp.hpp"
#include "engine/train/data/mnist.hpp"
#include "engine/train/data/perldoc.hpp"
#include "engine/train/models/resnet.hpp"
#include "engine/train/optim/sgd.hpp"
#include "engine/train/data/synthetic.hpp"
#include "engine/train/data/tensors.hpp"
#include "engine/train/data/text.hpp"
#include "engine/train/models/torchscript.hpp"
#include "engine/train/models/vgg.hpp"

namespace laconic::train {
namespace {

// 1298880 -> "1,298,880", as the other models' descriptions write their counts.
std::string digits_grouped(std::int64_t n) {
  std::string digits = std::to_string(n);
  for (auto at = static_cast<std::ptrdiff_t>(digits.size()) - 3; at > 0; at -= 3) digits.insert(static_cast<std::size_t>(at), ",");
  return digits;
}

}  // namespace

Registry<Dataset> builtin_datasets() {
  Registry<Dataset> r("dataset");
  r.add<FashionMnistDataset, FashionMnistOptions>(
      "fashion_mnist", "Fashion-MNIST, 60k/10k 28x28 grey images, 10 classes (Debian package)");
  r.add<MnistDataset, MnistOptions>("mnist",
                                    "MNIST digits, 60k/10k 28x28 grey images, 10 classes (idx files you download)");
  r.add<Cifar10Dataset, Cifar10Options>(
      "cifar10", "CIFAR-10, 50k/10k 32x32 colour images, 10 classes (binary batches you download)");
  r.add<SyntheticDataset, SyntheticOptions>("synthetic",
                                            "learnable class-conditional Gaussian clusters of any shape, seeded");
  r.add<TextDataset, TextOptions>(
      "text", "a text file for language models, word or byte tokens: windows of bptt tokens, next-token targets");
  r.add<PerldocDataset, PerldocOptions>(
      "perldoc", "English prose of Debian's perl-doc (5.9 MB), byte tokens: windows of context bytes");
  r.add<TensorsDataset, TensorsOptions>(
      "tensors", "your own data: two files of torch.save({\"inputs\": ..., \"labels\": ...}) from Python");
  return r;
}

Registry<Model> builtin_models() {
  Registry<Model> r("model");
  r.add<Lenet5, Lenet5Options>("lenet5", "LeNet-5 CNN for 28x28 images, 61,706 parameters");
  r.add<Mlp, MlpOptions>("mlp", "fully connected network on flattened inputs (Øland & Raj 2015)");
  r.add<Vgg11, Vgg11Options>("vgg11", "VGG-11 with batch norm for 32x32 images, width-scalable");
  r.add<Resnet, ResnetOptions>("resnet", "ResNet-18 adapted to 32x32 images, or the CIFAR ResNet-20 (depth = 20)");
  r.add<LstmLm, LstmLmOptions>("lstm_lm", "word-level LSTM language model, tied embeddings (Harris 2020)");
  r.add<Gpt, GptOptions>("gpt", str_cat("decoder-only transformer language model (GPT-2's blocks), ",
                                        digits_grouped(gpt_parameters(GptOptions{})), " parameters at the defaults"));
  r.add<TorchScriptModel, TorchScriptOptions>(
      "torchscript", "your PyTorch model, scripted or traced and saved (scripts/export-torchscript.py)");
  return r;
}

Registry<Optimizer> builtin_optimizers() {
  Registry<Optimizer> r("optimizer");
  r.add<Sgd, SgdOptions>("sgd", "stochastic gradient descent with (Nesterov) momentum");
  r.add<Adam, AdamOptions>("adam", "Adam (Kingma & Ba 2015) with L2 weight decay, PyTorch's update rule");
  r.add<AdamW, AdamWOptions>("adamw", "AdamW (Loshchilov & Hutter 2019): Adam with decoupled weight decay");
  r.add<Lamb, LambOptions>("lamb", "LAMB (You et al. 2020): Adam's direction scaled per layer by ||w|| / ||update||");
  r.add<Demo, DemoOptions>(
      "demo", "DeMo (Peng et al. 2024): decoupled momentum, each chunk's top DCT coefficients gathered, a sign step");
  r.add<OnebitAdam, OnebitAdamOptions>("onebit_adam",
                                       "1-bit Adam (Tang et al. 2021): dense Adam for a warm-up, then the variance "
                                       "frozen and the momentum exchanged in 1 bit with error feedback");
  return r;
}

}  // namespace laconic::train
