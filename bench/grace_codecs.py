"""GRACE-style implementations of the compressors GRACE measured, in plain LibTorch ops, written
from the methods' definitions and GRACE's wire formats (its TensorFlow compressors send a bool or
int8 per element, top-k values and int32 indices as one int32 tensor; every part of a payload is a
Horovod allgather of its own): what bench/grace_ranking.py times and sends. Each codec:

  compress(t) -> (parts, ctx)      the payload's tensors, each sent by its own collective
  decompress(parts, ctx) -> tensor
  collective: "allgather" (every rank decodes every rank's payload and sums) or "allreduce"
  (the payload is summed by the collective; Horovod fuses a step's allreduces into 64 MB buffers)
  phases: for allreduce codecs, how many fused allreduces a step needs (PowerSGD: P, then Q)

Methods GRACE implemented only in TensorFlow with no LibTorch twin here (8bit, adaq, inceptionn,
sketch) or whose payload depends on the gradients' values (threshold) are not modelled."""
import torch


class Codec:
    collective = "allgather"
    phases = 1

    def compress(self, t):
        raise NotImplementedError

    def decompress(self, parts, ctx):
        raise NotImplementedError


class Dense(Codec):
    collective = "allreduce"

    def compress(self, t):
        return [t.flatten()], t.shape

    def decompress(self, parts, ctx):
        return parts[0].view(ctx)


def _sparse_parts(flat, indices):
    values = flat[indices]
    return [torch.cat([values.view(torch.int32), indices.to(torch.int32)])]


def _scatter(parts, ctx):
    numel, shape = ctx
    both = parts[0]
    k = both.numel() // 2
    out = torch.zeros(numel)
    out.scatter_(0, both[k:].long(), both[:k].view(torch.float32))
    return out.view(shape)


class TopK(Codec):

    def __init__(self, ratio):
        self.ratio = ratio

    def compress(self, t):
        flat = t.flatten()
        k = max(1, int(flat.numel() * self.ratio))
        _, indices = torch.topk(flat.abs(), k, sorted=False)
        return _sparse_parts(flat, indices), (flat.numel(), t.shape)

    decompress = staticmethod(_scatter)


class Dgc(TopK):
    """Top-k by a threshold estimated from a 1% sample (one pass, no refinement)."""

    def compress(self, t):
        flat = t.flatten()
        n = flat.numel()
        sample = flat[torch.randint(0, n, (max(1, n // 100),))].abs()
        k = max(1, int(sample.numel() * self.ratio))
        threshold = torch.topk(sample, k, sorted=False)[0].min()
        indices = torch.nonzero(flat.abs() >= threshold).flatten()
        return _sparse_parts(flat, indices), (n, t.shape)


class RandomK(Codec):
    """k values at indices every rank draws from a shared seed (uniformly, with repeats, as
    GRACE's TensorFlow random-k does): summed by allreduce."""
    collective = "allreduce"

    def __init__(self, ratio):
        self.ratio = ratio

    def compress(self, t):
        flat = t.flatten()
        k = max(1, int(flat.numel() * self.ratio))
        indices = torch.randint(0, flat.numel(), (k,), generator=torch.Generator().manual_seed(1))
        return [flat[indices]], (indices, flat.numel(), t.shape)

    def decompress(self, parts, ctx):
        indices, numel, shape = ctx
        return torch.zeros(numel).index_put_((indices,), parts[0]).view(shape)


class Qsgd(Codec):
    def __init__(self, levels):
        self.levels = levels

    def compress(self, t):
        flat = t.flatten()
        norm = flat.norm().reshape(1)
        scaled = flat.abs() / norm * self.levels
        level = scaled.floor() + (torch.rand_like(flat) < scaled - scaled.floor()).float()
        return [(level * flat.sign()).to(torch.int8), norm], t.shape

    def decompress(self, parts, ctx):
        return (parts[0].float() * (parts[1] / self.levels)).view(ctx)


class TernGrad(Codec):
    def compress(self, t):
        flat = t.flatten()
        bound = 2.5 * flat.std().item()
        clipped = flat.clamp(-bound, bound)
        scale = clipped.abs().max().reshape(1)
        keep = torch.rand_like(flat) * scale < clipped.abs()
        return [(clipped.sign() * keep).to(torch.int8), scale], t.shape

    def decompress(self, parts, ctx):
        return (parts[0].float() * parts[1]).view(ctx)


class SignSgd(Codec):
    def compress(self, t):
        return [t.flatten() >= 0], t.shape

    def decompress(self, parts, ctx):
        return (parts[0].float() * 2 - 1).view(ctx)


class Signum(SignSgd):
    """signSGD of a momentum kept on the worker (one more element-wise update)."""

    def compress(self, t):
        momentum = 0.9 * t + 0.1 * t
        return [momentum.flatten() >= 0], t.shape


class EfSignSgd(Codec):

    def compress(self, t):
        flat = t.flatten()
        return [flat >= 0, flat.abs().mean().reshape(1)], t.shape

    def decompress(self, parts, ctx):
        return ((parts[0].float() * 2 - 1) * parts[1]).view(ctx)


class OneBit(Codec):

    def compress(self, t):
        flat = t.flatten()
        negative = flat < 0
        means = torch.stack([flat[negative].mean(), flat[~negative].mean()])
        return [negative, torch.nan_to_num(means)], t.shape

    def decompress(self, parts, ctx):
        negative = parts[0].float()
        return (negative * parts[1][0] + (1 - negative) * parts[1][1]).view(ctx)


class Natural(Codec):
    """Natural compression: each value rounded at random to a signed power of two, sent as one
    byte (sign and exponent)."""

    def compress(self, t):
        bits = t.flatten().view(torch.int32)
        exponent = (bits >> 23) & 0xFF
        round_up = (bits & 0x7FFFFF) > torch.randint(0, 0x7FFFFF, bits.shape, dtype=torch.int32)
        exponent = (exponent + round_up.int()).clamp(18, 145) - 18
        sign = (bits < 0).int() << 7
        return [(sign | exponent).to(torch.uint8)], t.shape

    def decompress(self, parts, ctx):
        code = parts[0].int()
        magnitude = (((code & 0x7F) + 18) << 23).view(torch.float32) * ((code & 0x7F) >= 1).float()
        return torch.where(code >= 128, -magnitude, magnitude).view(ctx)


class PowerSgd(Codec):
    """Rank-1 PowerSGD: a matrix's P = M q, then Q = M^T P, each summed by a fused allreduce;
    vectors are sent dense."""
    collective = "allreduce"
    phases = 2

    def compress(self, t):
        if t.dim() == 1:
            return [t], None
        matrix = t.reshape(t.shape[0], -1)
        q = torch.ones(matrix.shape[1], 1)
        q = q / q.norm()
        p = matrix @ q
        p = p / p.norm()
        return [p, matrix.t() @ p], t.shape

    def decompress(self, parts, ctx):
        if ctx is None:
            return parts[0]
        return (parts[0] @ parts[1].t()).view(ctx)


def codec_of(method, ratio, name):
    """The codec of one of GRACE's configurations (its `method`, `ratio` and run `name`), or None."""
    number = float(ratio) if ratio not in ("n/a", None) else None
    if method == "none":
        return Dense()
    if method == "topk":
        return TopK(number)
    if method == "dgc":
        return Dgc(number)
    if method == "randomk":
        return RandomK(number)
    if method == "qsgd":
        return Qsgd(int(name.split("q=")[1]))
    simple = {"terngrad": TernGrad, "signsgd": SignSgd, "signum": Signum, "efsignsgd": EfSignSgd,
              "onebit": OneBit, "natural": Natural, "powersgd": PowerSgd}
    return simple[method]() if method in simple else None
