-- Deep Gradient Compression (Lin et al. 2018) on LeNet-5 / Fashion-MNIST with 2 workers. DGC
-- keeps the momentum itself (momentum correction), so the optimizer runs without momentum. One
-- epoch only, so the ratio warm-up (0.25, 0.0625, ... over `warmup`) is switched off.
experiment {
  name       = "dgc",
  data       = fashion_mnist(),
  model      = lenet5(),
  optimizer  = sgd { lr = 0.05, momentum = 0 },
  batch_size = 64,
  epochs     = 1,
  workers    = 2,
  compressor = sweep {
    dgc { ratio = 0.01, momentum = 0.9, warmup = 0 },
    dgc { ratio = 0.001, momentum = 0.9, warmup = 0 },
    dgc { ratio = 0.01, momentum = 0.9, warmup = 0, scope = "layer", min_size = 1000 },
  },
  seeds      = { 1 },
}
