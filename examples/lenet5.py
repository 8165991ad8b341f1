"""LeNet-5 in PyTorch, the same network as laconic's built-in lenet5() (engine/train/models/lenet5.cpp):
ReLU and max pooling, the first convolution padded by 2 so 28x28 inputs give the original 32x32
geometry; 61,706 parameters for 10 classes, named and ordered as the built-in model's.

    python3 scripts/export-torchscript.py examples/lenet5.py:LeNet5 --input 1,28,28 --out lenet5.pt

then, in an experiment file next to lenet5.pt:

    model = torchscript { file = "lenet5.pt", input = {1, 28, 28}, classes = 10 },
"""
import torch
import torch.nn.functional as F
from torch import nn


class LeNet5(nn.Module):
    def __init__(self, classes: int = 10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.flatten(1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


class SmallBatchNormNet(nn.Module):
    """A small CNN with batch norm and dropout, for 1x28x28 images: buffers (running statistics)
    and a train/eval switch, as laconic's tests exercise them."""

    def __init__(self, classes: int = 10, width: int = 8):
        super().__init__()
        self.conv1 = nn.Conv2d(1, width, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, 2 * width, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(2 * width)
        self.drop = nn.Dropout(0.25)
        self.fc = nn.Linear(2 * width * 7 * 7, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        return self.fc(self.drop(x.flatten(1)))
