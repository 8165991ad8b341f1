-- quantized_allreduce on one link: LeNet-5 / Fashion-MNIST, 8 workers as threads, one epoch
-- (docs/experiments.md, "Quantized allreduce"). The ring requantizes each partial sum at every hop:
-- how its rounding and its chunk size change what training reaches, against dense, fp16 (summed in
-- the ring as DDP's hook does), the same quantizer gathered (quantized once per worker) and QSGD with
-- as many levels. Communication is projected onto 1 Gbit/s.
experiment {
  name       = "quantized-allreduce",
  data       = fashion_mnist(),
  model      = lenet5(),
  optimizer  = sgd { lr = 0.05, momentum = 0.9 },
  batch_size = 32,
  epochs     = 1,
  workers    = 8,
  placement  = threads(),
  topology   = allreduce { algorithm = "ring" },
  compressor = sweep {
    none(),
    fp16(),
    quantized_allreduce(),
    quantized_allreduce { rounding = "nearest" },
    quantized_allreduce { chunk = 64 },
    quantized_allreduce { bits = 4, rounding = "nearest", chunk = 64 },
    quantized_allreduce { gather = true },
    qsgd { levels = 127, bucket_size = 1024 },
  },
  seeds      = { 1, 2 },
}
