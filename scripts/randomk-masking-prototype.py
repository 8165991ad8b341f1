#!/usr/bin/env python3
"""Random-k 1% with error feedback and momentum 0.9, with and without momentum factor masking.

A plain PyTorch prototype (Debian's python3-torch, not laconic) of issue 19's open question: 2
workers simulated in one process, LeNet-5 on Fashion-MNIST, batch 64 per worker, the update
exchange (each worker compresses p = lr * m + e, m its own momentum, e its error feedback;
random-k with indices shared by the workers, unscaled values; the mean is applied to the
weights). `mask` also zeroes the worker's momentum at the sent coordinates (DGC's momentum
factor masking). Prints the test accuracy every 300 steps (938 steps = 2 epochs).

  /usr/bin/python3 scripts/randomk-masking-prototype.py MODE LR MOMENTUM [STEPS]
  MODE: dense | randomk | mask
"""
import gzip, sys, numpy as np, torch, torch.nn as nn, torch.nn.functional as F
torch.set_num_threads(1)
def idx(p, off): return np.frombuffer(gzip.open(p).read(), dtype=np.uint8, offset=off)
d='/usr/share/datasets/fashion-mnist/'
X=torch.tensor(idx(d+'train-images-idx3-ubyte.gz',16).reshape(-1,1,28,28),dtype=torch.float32)/255.
Y=torch.tensor(idx(d+'train-labels-idx1-ubyte.gz',8),dtype=torch.long)
Xt=torch.tensor(idx(d+'t10k-images-idx3-ubyte.gz',16).reshape(-1,1,28,28),dtype=torch.float32)/255.
Yt=torch.tensor(idx(d+'t10k-labels-idx1-ubyte.gz',8),dtype=torch.long)
class LeNet(nn.Module):
    def __init__(s):
        super().__init__(); s.c1=nn.Conv2d(1,6,5,padding=2); s.c2=nn.Conv2d(6,16,5); s.f1=nn.Linear(400,120); s.f2=nn.Linear(120,84); s.f3=nn.Linear(84,10)
    def forward(s,x):
        x=F.max_pool2d(F.relu(s.c1(x)),2); x=F.max_pool2d(F.relu(s.c2(x)),2); x=x.flatten(1)
        return s.f3(F.relu(s.f2(F.relu(s.f1(x)))))
mode=sys.argv[1]; lr=float(sys.argv[2]); mu=float(sys.argv[3]); steps=int(sys.argv[4]) if len(sys.argv)>4 else 900
torch.manual_seed(1); net=LeNet(); params=list(net.parameters()); n=sum(p.numel() for p in params)
W=2; B=64; k=max(1,int(0.01*n+0.999))
m=[torch.zeros(n) for _ in range(W)]; e=[torch.zeros(n) for _ in range(W)]
g=torch.Generator().manual_seed(7); perm=torch.randperm(60000,generator=g)
def flatgrad(x,y):
    net.zero_grad(); F.cross_entropy(net(x),y).backward(); return torch.cat([p.grad.flatten() for p in params])
for step in range(steps):
    idxs=torch.randperm(n,generator=g)[:k] if mode!='dense' else None
    agg=torch.zeros(n)
    for w in range(W):
        s=(step*W+w)*B % 60000; b=perm[s:s+B]
        gr=flatgrad(X[b],Y[b])
        m[w]=mu*m[w]+gr
        p=lr*m[w]+e[w]
        if mode=='dense': c=p; e[w].zero_()
        else:
            c=torch.zeros(n); c[idxs]=p[idxs]; e[w]=p-c
            if mode=='mask': m[w][idxs]=0
        agg+=c/W
    with torch.no_grad():
        off=0
        for p_ in params:
            p_-=agg[off:off+p_.numel()].view_as(p_); off+=p_.numel()
    if step%300==299 or step==steps-1:
        with torch.no_grad(): acc=(net(Xt).argmax(1)==Yt).float().mean().item()
        print(mode,lr,mu,step+1,round(acc,4),flush=True)
