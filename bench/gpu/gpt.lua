-- The GPU training check's second experiment (bench/gpu/train_check.sh): laconic's default
-- transformer on perl-doc's English prose (byte tokens, context 128), on GPU 0, at 2 and 4 ranks
-- sharing the card, with none, fp16 and Top-k. The check sets data.root to the carried pod files.
experiment {
  name = "gpu-gpt",
  data = perldoc { context = 128 },
  model = gpt(),
  optimizer = adamw { lr = 1e-3, weight_decay = 0.1 },
  compressor = sweep { none(), fp16(), topk { ratio = 0.01, error_feedback = true } },
  workers = sweep { 2, 4 },
  batch_size = 32,
  epochs = 1,
  max_steps = 120,
  eval_limit = 64,
  timeout = 120,
  device = cuda(),
}
