"""The gradient tensors' shapes of the four models GRACE measured for image classification
(resnet20_v2 and densenet40_k12 on CIFAR-10, resnet50 and vgg19 on ImageNet), written from their
published architectures: what bench/grace_ranking.py compresses and sends, tensor by tensor."""


def _batch_norm(channels):
    return [(channels,), (channels,)]  # gamma, beta


def resnet20_v2():
    """He et al.'s pre-activation ResNet for CIFAR-10: 3 stages of 3 basic blocks, 16/32/64
    filters, a 1x1 projection where a stage changes the width; 272k parameters."""
    shapes = [(16, 3, 3, 3)]
    channels = 16
    for filters in (16, 32, 64):
        for block in range(3):
            shapes += _batch_norm(channels) + [(filters, channels, 3, 3)]
            shapes += _batch_norm(filters) + [(filters, filters, 3, 3)]
            if block == 0 and channels != filters:
                shapes.append((filters, channels, 1, 1))
            channels = filters
    return shapes + _batch_norm(channels) + [(10, channels), (10,)]


def densenet40_k12():
    """Huang et al.'s DenseNet-40 (growth 12) for CIFAR-10: 3 dense blocks of 12 BN-ReLU-conv3x3
    layers, transitions of BN-conv1x1 keeping the width; about 1.0M parameters."""
    shapes = [(16, 3, 3, 3)]
    channels = 16
    for block in range(3):
        for _ in range(12):
            shapes += _batch_norm(channels) + [(12, channels, 3, 3)]
            channels += 12
        if block < 2:
            shapes += _batch_norm(channels) + [(channels, channels, 1, 1)]
    return shapes + _batch_norm(channels) + [(10, channels), (10,)]


def resnet50():
    """ResNet-50 for ImageNet: bottleneck blocks 3/4/6/3, widths 64..512 (x4 out); 25.6M."""
    shapes = [(64, 3, 7, 7)] + _batch_norm(64)
    channels = 64
    for planes, blocks in ((64, 3), (128, 4), (256, 6), (512, 3)):
        for block in range(blocks):
            shapes += [(planes, channels, 1, 1)] + _batch_norm(planes)
            shapes += [(planes, planes, 3, 3)] + _batch_norm(planes)
            shapes += [(planes * 4, planes, 1, 1)] + _batch_norm(planes * 4)
            if block == 0:
                shapes += [(planes * 4, channels, 1, 1)] + _batch_norm(planes * 4)
            channels = planes * 4
    return shapes + [(1000, 2048), (1000,)]


def vgg19():
    """VGG-19 for ImageNet: 16 3x3 convolutions with biases, three fully connected layers;
    143.7M parameters."""
    shapes = []
    channels = 3
    for width, convolutions in ((64, 2), (128, 2), (256, 4), (512, 4), (512, 4)):
        for _ in range(convolutions):
            shapes += [(width, channels, 3, 3), (width,)]
            channels = width
    for inputs, outputs in ((512 * 7 * 7, 4096), (4096, 4096), (4096, 1000)):
        shapes += [(outputs, inputs), (outputs,)]
    return shapes


MODELS = {
    "resnet20_v2": resnet20_v2,
    "densenet40_k12": densenet40_k12,
    "resnet50": resnet50,
    "vgg19": vgg19,
}
