-- A transformer language model on real English prose, with compressed gradients: gpt (GPT-2's
-- blocks, 1.3M parameters: 4 layers, 4 heads, width 160, context 128 bytes) on perldoc (the
-- prose of Debian's perl-doc, 5.9 MB of bytes), 2 workers, ring allreduce, AdamW with warm-up,
-- cosine decay and gradient clipping, as language models are trained now. Dense fp32 against
-- fp16 (summed in the ring, as DDP's fp16 hook), PowerSGD rank 4 and Top-k 1% with error
-- feedback. docs/experiments.md says what it shows, with the figures of one run.
--
--   laconic run experiments/gpt.lua        (about 15 minutes on 2 cores)
--   laconic report gpt                     ranks them by validation perplexity
experiment {
  name       = "gpt",
  data       = perldoc { context = 128 },
  model      = gpt { context = 128 },
  optimizer  = adamw { lr = 2e-3, betas = { 0.9, 0.95 }, weight_decay = 0.1 },
  lr_schedule = cosine { final = 0.1, warmup_steps = 20 },
  clip_norm  = 1.0,
  batch_size = 16,           -- windows of 128 bytes per worker per step: 4,096 bytes a step for both
  epochs     = 1,
  max_steps  = 200,          -- 819,200 bytes of training text, 15% of the training split
  eval_every = 50,
  eval_limit = 256,          -- validation windows per evaluation (32,768 bytes)
  workers    = 2,
  topology   = allreduce(),
  schedule   = synchronous(),
  compressor = sweep { none(), fp16(), powersgd { rank = 4 }, topk { ratio = 0.01, error_feedback = true } },
  seeds      = { 1 },
}
