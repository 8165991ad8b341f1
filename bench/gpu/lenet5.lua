-- The GPU training check's first experiment (bench/gpu/train_check.sh): LeNet-5 on Fashion-MNIST,
-- on GPU 0, at 2 and 4 ranks sharing the card, with none, fp16 and Top-k. The check sets
-- data.root to the carried dataset's folder.
experiment {
  name = "gpu-lenet5",
  data = fashion_mnist(),
  model = lenet5(),
  optimizer = sgd { lr = 0.05, momentum = 0.9 },
  compressor = sweep { none(), fp16(), topk { ratio = 0.01, error_feedback = true } },
  workers = sweep { 2, 4 },
  batch_size = 64,
  epochs = 1,
  max_steps = 120,
  eval_limit = 2000,
  timeout = 120,
  device = cuda(),
}
