-- DiLoCo at this machine's scale (issue 65; docs/experiments.md, "DiLoCo"): a small gpt (2
-- blocks, width 128, context 64 bytes: 0.44M parameters) on perldoc, 4 workers as thread ranks
-- (placement = threads(): each rank's time is its own CPU time, so 4 ranks on 2 cores are timed
-- as if each had a core), inner AdamW with warm-up and cosine decay, the same tokens for every
-- configuration (1200 steps of 8 windows per worker). Against synchronous AdamW (every step's
-- gradient all-reduced):
--   - DiLoCo with H = 1, 10, 50 and 100 inner steps per round (OpenDiLoCo's outer Nesterov SGD);
--   - fp16 and 8-bit pseudo-gradients at H = 50 (OpenDiLoCo, INTELLECT-1: no loss);
--   - plain averaging (outer sgd { lr = 1 }, which is local SGD) at H = 50 (DiLoCo's ablation);
--   - Streaming DiLoCo with 4 fragments at H = 50: the same loss with a quarter of the peak bytes;
--   - and with each fragment's exchange overlapping 5 inner steps, mixed in with alpha = 0.5, in
--     fp32 and as 4-bit pseudo-gradients (Streaming DiLoCo's full recipe).
--
--   laconic run experiments/diloco.lua                       (about an hour on 2 cores)
--   laconic report diloco --link 100Mbit --link 10Gbit       which reaches the target first
local nesterov = sgd { lr = 0.7, momentum = 0.9, nesterov = true }
experiment {
  name        = "diloco",
  data        = perldoc { context = 64 },
  model       = gpt { layers = 2, embed = 128, heads = 4, context = 64 },
  optimizer   = adamw { lr = 2e-3, betas = { 0.9, 0.95 }, weight_decay = 0.1 },
  lr_schedule = cosine { final = 0.1, warmup_steps = 50 },
  clip_norm   = 1.0,
  batch_size  = 8,             -- windows of 64 bytes per worker per step
  epochs      = 1,
  max_steps   = 1200,          -- 4 workers x 8 x 64 x 1200 = 2.5 MB of training text for every configuration
  eval_every  = 100,
  eval_limit  = 256,           -- validation windows per evaluation (16 kB)
  workers     = 4,
  placement   = threads(),
  topology    = allreduce(),
  schedule    = sweep {
    synchronous(),
    diloco { inner_steps = 1, outer = nesterov },
    diloco { inner_steps = 10, outer = nesterov },
    diloco { inner_steps = 50, outer = nesterov },
    diloco { inner_steps = 100, outer = nesterov },
    diloco { inner_steps = 50, outer = nesterov },
    diloco { inner_steps = 50, outer = nesterov },
    diloco { inner_steps = 50, outer = sgd { lr = 1 } },
    diloco { inner_steps = 50, outer = nesterov, fragments = 4 },
    diloco { inner_steps = 50, outer = nesterov, fragments = 4, overlap = 5, alpha = 0.5 },
    diloco { inner_steps = 50, outer = nesterov, fragments = 4, overlap = 5, alpha = 0.5 },
    group = "method" },
  compressor  = sweep { none(), none(), none(), none(), none(), fp16(), uniform { bits = 8 }, none(), none(),
                        none(), uniform { bits = 4 }, group = "method" },
  seeds       = { 1 },
}
