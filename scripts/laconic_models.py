"""laconic's built-in models written in PyTorch, with the same layers, shapes and parameter order
(engine/train/models/lenet5.cpp, mlp.cpp, resnet.cpp, vgg.cpp, gpt.cpp): what scripts/profile-hardware.py times on
a GPU and bench/ddp_side_by_side.py trains under DDP. tests/train/python_twins_test.cpp checks
that each has the built-in's parameter count; Gpt, the transformer, is checked further: the same
logits and losses from laconic's weights (tests/train/gpt_twin_check.py).

    import laconic_models
    model, input_shape = laconic_models.build("resnet20")
"""
import torch
from torch import nn
from torch.nn import functional as F


class LeNet5(nn.Module):  # engine/train/models/lenet5.cpp
    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1, self.fc2, self.fc3 = nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2).flatten(1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class Mlp(nn.Module):  # engine/train/models/mlp.cpp
    ACTIVATIONS = {"tanh": torch.tanh, "relu": torch.relu, "sigmoid": torch.sigmoid}

    def __init__(self, sizes=(784, 392, 50, 10), activation="tanh"):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))
        self.activation = self.ACTIVATIONS[activation]

    def forward(self, x):
        x = x.flatten(1)
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i + 1 < len(self.layers):
                x = self.activation(x)
        return x


class Block(nn.Module):  # engine/train/models/resnet.cpp: BasicBlock
    def __init__(self, cin, cout, stride, projection):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.norm1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.norm2 = nn.BatchNorm2d(cout)
        self.stride, self.pad = stride, cout - cin
        self.reshapes = stride != 1 or cin != cout
        self.project = None
        if self.reshapes and projection:
            self.project = nn.Conv2d(cin, cout, 1, stride, bias=False)
            self.project_norm = nn.BatchNorm2d(cout)

    def forward(self, x):
        y = self.norm2(self.conv2(F.relu(self.norm1(self.conv1(x)))))
        s = x
        if self.reshapes and self.project is not None:
            s = self.project_norm(self.project(x))
        elif self.reshapes:  # option A of He et al.: every stride-th pixel, zero channels appended
            s = F.pad(x[:, :, ::self.stride, ::self.stride], (0, 0, 0, 0, 0, self.pad))
        return F.relu(y + s)


class Resnet(nn.Module):  # engine/train/models/resnet.cpp: depth 20 (CIFAR) or 18
    def __init__(self, depth=18, classes=10, in_channels=3):
        super().__init__()
        cifar = depth == 20
        stages = [(16, 3, 1), (32, 3, 2), (64, 3, 2)] if cifar else [(64, 2, 1), (128, 2, 2), (256, 2, 2), (512, 2, 2)]
        cin = stages[0][0]
        self.stem, self.stem_norm = nn.Conv2d(in_channels, cin, 3, 1, 1, bias=False), nn.BatchNorm2d(cin)
        blocks = []
        for cout, count, stride in stages:
            for b in range(count):
                blocks.append(Block(cin, cout, stride if b == 0 else 1, projection=not cifar))
                cin = cout
        self.blocks = nn.Sequential(*blocks)
        self.classifier = nn.Linear(cin, classes)

    def forward(self, x):
        x = self.blocks(F.relu(self.stem_norm(self.stem(x))))
        return self.classifier(F.adaptive_avg_pool2d(x, 1).flatten(1))


class Vgg11(nn.Module):  # engine/train/models/vgg.cpp
    LAYERS = (64, 0, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0)  # 0: a 2x2 max pooling

    def __init__(self, width=1.0, classes=10, in_channels=3):
        super().__init__()
        layers, cin = [], in_channels
        for channels in self.LAYERS:
            if channels == 0:
                layers.append(nn.MaxPool2d(2))
                continue
            cout = max(1, round(channels * width))
            layers += [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]
            cin = cout
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(cin, classes)

    def forward(self, x):
        return self.classifier(F.adaptive_avg_pool2d(self.features(x), 1).flatten(1))


class Gpt(nn.Module):  # engine/train/models/gpt.cpp: the same parameters, names, order and operations
    """GPT-2's decoder-only transformer as laconic builds it (pre-LayerNorm blocks, exact GELU, the
    head tied to the token embedding when `tied`). Parameters are created empty: load laconic's
    weights into them (tests/train/gpt_twin_check.py) or call init_gpt2()."""

    def __init__(self, layers=4, heads=4, embed=160, context=128, vocab=256, tied=True, bias=True):
        super().__init__()
        self.layers, self.heads, self.embed, self.tied, self.bias = layers, heads, embed, tied, bias
        d = embed

        def parameter(name, *shape):
            setattr(self, name, nn.Parameter(torch.empty(*shape)))

        parameter("wte", vocab, d)
        parameter("wpe", context, d)
        for i in range(layers):
            for name, shape, biased in (("ln1_weight", (d,), False), ("ln1_bias", (d,), True),
                                        ("attn_weight", (3 * d, d), False), ("attn_bias", (3 * d,), True),
                                        ("proj_weight", (d, d), False), ("proj_bias", (d,), True),
                                        ("ln2_weight", (d,), False), ("ln2_bias", (d,), True),
                                        ("fc_weight", (4 * d, d), False), ("fc_bias", (4 * d,), True),
                                        ("out_weight", (d, 4 * d), False), ("out_bias", (d,), True)):
                if bias or not biased:
                    parameter(f"h{i}_{name}", *shape)
        parameter("ln_f_weight", d)
        if bias:
            parameter("ln_f_bias", d)
        if not tied:
            parameter("head_weight", vocab, d)
        self.register_buffer("mask", torch.full((context, context), float("-inf")).triu(1), persistent=False)

    def init_gpt2(self):
        """GPT-2's initialisation, as gpt.cpp draws it (not the same random numbers)."""
        with torch.no_grad():
            for name, p in self.named_parameters():
                if name.endswith("_bias"):
                    p.zero_()
                elif "ln" in name:
                    p.fill_(1.0)
                elif name.endswith("proj_weight") or name.endswith("out_weight"):
                    p.normal_(0.0, 0.02 / (2 * self.layers) ** 0.5)
                else:
                    p.normal_(0.0, 0.02)
        return self

    def block(self, i, x):
        get = lambda name: getattr(self, f"h{i}_{name}", None)
        batch, tokens, d = x.shape
        width = d // self.heads
        h = F.layer_norm(x, (d,), get("ln1_weight"), get("ln1_bias"))
        q, k, v = F.linear(h, get("attn_weight"), get("attn_bias")).split(d, 2)
        per_head = lambda t: t.view(batch, tokens, self.heads, width).transpose(1, 2)
        q, k, v = per_head(q) * (1.0 / width ** 0.5), per_head(k), per_head(v)
        scores = torch.matmul(q, k.transpose(-2, -1)) + self.mask[:tokens, :tokens]
        y = torch.matmul(torch.softmax(scores, -1), v).transpose(1, 2).contiguous().view(batch, tokens, d)
        x = x + F.linear(y, get("proj_weight"), get("proj_bias"))
        h = F.gelu(F.linear(F.layer_norm(x, (d,), get("ln2_weight"), get("ln2_bias")), get("fc_weight"), get("fc_bias")))
        return x + F.linear(h, get("out_weight"), get("out_bias"))

    def forward(self, tokens):
        x = F.embedding(tokens, self.wte) + self.wpe[:tokens.shape[1]]
        for i in range(self.layers):
            x = self.block(i, x)
        x = F.layer_norm(x, (self.embed,), self.ln_f_weight, getattr(self, "ln_f_bias", None))
        return F.linear(x, self.wte if self.tied else self.head_weight)


# name on the command line: (laconic's model name, constructor, input shape of one example)
MODELS = {
    "lenet5": ("lenet5", LeNet5, (1, 28, 28)),
    "mlp": ("mlp", Mlp, (1, 28, 28)),
    "resnet20": ("resnet", lambda: Resnet(depth=20), (3, 32, 32)),
    "resnet18": ("resnet", lambda: Resnet(depth=18), (3, 32, 32)),
    "vgg11": ("vgg11", Vgg11, (3, 32, 32)),
    # One example is a sequence of 128 byte tokens (perldoc { }): laconic's default gpt.
    "gpt": ("gpt", lambda: Gpt().init_gpt2(), (128,)),
}


def build(name):
    """(model, laconic's model name, input shape of one example) for a name of MODELS."""
    laconic_name, make, shape = MODELS[name]
    return make(), laconic_name, shape


def parameters(model):
    """Trainable parameters, as laconic's model_parameters counts them."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
