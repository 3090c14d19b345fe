"""Test-model zoo for brisk: small TorchScript models with random weights.

Every builder takes no arguments, seeds torch itself, and returns a `ZooModel`:
  eager    -- the nn.Module in eval mode
  scripted -- torch.jit.script(eager) (or torch.jit.trace where noted)
  inputs   -- (args, kwargs) example inputs
  inputs2  -- (args, kwargs) second inputs (different shape where the model allows)

See README.md for the on-disk format written by export.py.
"""

import collections
from typing import Dict, List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

ZooModel = collections.namedtuple("ZooModel", ["eager", "scripted", "inputs", "inputs2"])


def _inp(*args, **kwargs):
    return (list(args), dict(kwargs))


# --------------------------------------------------------------------------- torchvision

def resnet18() -> ZooModel:
    import torchvision

    torch.manual_seed(1)
    m = torchvision.models.resnet18(weights=None).eval()
    g = torch.Generator().manual_seed(101)
    return ZooModel(
        m,
        torch.jit.script(m),
        _inp(torch.randn(1, 3, 224, 224, generator=g)),
        _inp(torch.randn(2, 3, 224, 224, generator=g)),
    )


def mobilenet_v2() -> ZooModel:
    import torchvision

    torch.manual_seed(2)
    m = torchvision.models.mobilenet_v2(weights=None).eval()
    g = torch.Generator().manual_seed(102)
    return ZooModel(
        m,
        torch.jit.script(m),
        _inp(torch.randn(1, 3, 224, 224, generator=g)),
        _inp(torch.randn(2, 3, 224, 224, generator=g)),
    )


# --------------------------------------------------------------------------- mlp

class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(256, 512)
        self.fc2 = nn.Linear(512, 512)
        self.fc3 = nn.Linear(512, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def mlp() -> ZooModel:
    torch.manual_seed(3)
    m = MLP().eval()
    g = torch.Generator().manual_seed(103)
    return ZooModel(
        m,
        torch.jit.script(m),
        _inp(torch.randn(1, 256, generator=g)),
        _inp(torch.randn(64, 256, generator=g)),
    )


# --------------------------------------------------------------------------- deepandwide

NUM_TABLES = 8
NUM_ROWS = 10000
EMB_DIM = 16
IDS_PER_SAMPLE = 10
DENSE_DIM = 32


class DeepAndWide(nn.Module):
    """forward(dense [B,32] f32, ids [8, B*10] i64, offsets [8, B] i64) -> [B,1] f32.

    Table t is fed ids[t] with offsets[t] (1-D EmbeddingBag input format).
    Tables 0 and 1 use padding_idx=0; tables 2 and 5 use mode='mean'.
    """

    def __init__(self):
        super().__init__()
        tables = []
        for t in range(NUM_TABLES):
            mode = "mean" if t in (2, 5) else "sum"
            pad = 0 if t in (0, 1) else None
            tables.append(nn.EmbeddingBag(NUM_ROWS, EMB_DIM, mode=mode, padding_idx=pad))
        self.tables = nn.ModuleList(tables)
        self.dense_mlp = nn.Sequential(
            nn.Linear(DENSE_DIM, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU())
        self.top = nn.Sequential(
            nn.Linear(32 + NUM_TABLES * EMB_DIM, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, dense: torch.Tensor, ids: torch.Tensor,
                offsets: torch.Tensor) -> torch.Tensor:
        feats: List[torch.Tensor] = [self.dense_mlp(dense)]
        for t, table in enumerate(self.tables):
            feats.append(table(ids[t], offsets[t]))
        x = torch.cat(feats, dim=1)
        return torch.sigmoid(self.top(x))


def _dw_inputs(batch: int, g: torch.Generator):
    dense = torch.randn(batch, DENSE_DIM, generator=g)
    ids = torch.randint(0, NUM_ROWS, (NUM_TABLES, batch * IDS_PER_SAMPLE),
                        generator=g, dtype=torch.int64)
    # Make sure padding ids (0) actually occur in the padding tables.
    ids[0, ::7] = 0
    ids[1, ::3] = 0
    offsets = (torch.arange(batch, dtype=torch.int64) * IDS_PER_SAMPLE)
    offsets = offsets.unsqueeze(0).repeat(NUM_TABLES, 1).contiguous()
    return _inp(dense, ids, offsets)


def deepandwide() -> ZooModel:
    torch.manual_seed(4)
    m = DeepAndWide().eval()
    g = torch.Generator().manual_seed(104)
    return ZooModel(m, torch.jit.script(m), _dw_inputs(1, g), _dw_inputs(32, g))


# --------------------------------------------------------------------------- transformer

def transformer() -> ZooModel:
    # Scripted (torch.jit.script works for nn.TransformerEncoder on torch 2.14, without
    # warnings). In eval mode under no_grad, without masks, the layers take the fast path
    # (aten::_transformer_encoder_layer_fwd); the scripted graph also keeps the ordinary
    # path (linear / aten::scaled_dot_product_attention / layer_norm) and the
    # nested-tensor checks behind prim::Ifs.
    torch.manual_seed(5)
    layer = nn.TransformerEncoderLayer(
        d_model=256, nhead=4, dim_feedforward=1024, batch_first=True)
    m = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False).eval()
    g = torch.Generator().manual_seed(105)
    return ZooModel(
        m,
        torch.jit.script(m),
        _inp(torch.randn(1, 64, 256, generator=g)),
        _inp(torch.randn(2, 32, 256, generator=g)),
    )


# --------------------------------------------------------------------------- inception

class _Branches(nn.Module):
    def __init__(self):
        super().__init__()
        self.b1_reduce = nn.Conv2d(64, 32, 1)
        self.b1_conv = nn.Conv2d(32, 48, 3, padding=1)
        self.b2_reduce = nn.Conv2d(64, 16, 1)
        self.b2_conv = nn.Conv2d(16, 24, 5, padding=2)

    def branch1(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.b1_conv(F.relu(self.b1_reduce(x))))

    def branch2(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.b2_conv(F.relu(self.b2_reduce(x))))


class _Branch1(nn.Module):
    def __init__(self, reduce: nn.Conv2d, conv: nn.Conv2d):
        super().__init__()
        self.reduce = reduce
        self.conv = conv

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.conv(F.relu(self.reduce(x))))


class InceptionFork(nn.Module):
    """forward(x [B,64,28,28]) -> [B,72,28,28]; branch 1 runs via torch.jit.fork."""

    def __init__(self):
        super().__init__()
        b = _Branches()
        self.branch1 = _Branch1(b.b1_reduce, b.b1_conv)
        self.branch2 = _Branch1(b.b2_reduce, b.b2_conv)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        fut = torch.jit.fork(self.branch1, x)
        y2 = self.branch2(x)
        y1 = torch.jit.wait(fut)
        return torch.cat([y1, y2], dim=1)


class InceptionNoFork(nn.Module):
    """Same block and weights as InceptionFork (same seed), both branches inline."""

    def __init__(self):
        super().__init__()
        b = _Branches()
        self.branch1 = _Branch1(b.b1_reduce, b.b1_conv)
        self.branch2 = _Branch1(b.b2_reduce, b.b2_conv)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y1 = self.branch1(x)
        y2 = self.branch2(x)
        return torch.cat([y1, y2], dim=1)


def _inception_inputs():
    g = torch.Generator().manual_seed(106)
    return (_inp(torch.randn(1, 64, 28, 28, generator=g)),
            _inp(torch.randn(2, 64, 28, 28, generator=g)))


def inception_fork() -> ZooModel:
    torch.manual_seed(6)
    m = InceptionFork().eval()
    i1, i2 = _inception_inputs()
    return ZooModel(m, torch.jit.script(m), i1, i2)


def inception_nofork() -> ZooModel:
    torch.manual_seed(6)  # same seed -> same weights as inception_fork
    m = InceptionNoFork().eval()
    i1, i2 = _inception_inputs()
    return ZooModel(m, torch.jit.script(m), i1, i2)


# --------------------------------------------------------------------------- control flow

class ControlFlow(nn.Module):
    """forward(x [B,16] f32, n: int) -> [B,16].

    Data-dependent `if` on x.sum(), a `for` loop of n iterations collecting into a
    list, then torch.stack + sum and a torch.cat.
    """

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.fc_neg = nn.Linear(16, 8)

    def forward(self, x: torch.Tensor, n: int) -> torch.Tensor:
        if bool(x.sum() > 0):
            h = torch.tanh(self.fc(x))
        else:
            a = self.fc_neg(x)
            h = torch.cat([a, -a], dim=1)
        acc: List[torch.Tensor] = []
        cur = h
        for i in range(n):
            cur = cur * 0.5 + self.fc(cur) * float(i + 1) * 0.1
            acc.append(cur)
        out = torch.stack(acc, dim=0).sum(dim=0)
        return torch.cat([out, h], dim=1)[:, :16] + out


def control_flow() -> ZooModel:
    torch.manual_seed(7)
    m = ControlFlow().eval()
    g = torch.Generator().manual_seed(107)
    x1 = torch.randn(2, 16, generator=g).abs() + 0.1   # sum > 0: tanh branch
    x2 = -(torch.randn(4, 16, generator=g).abs() + 0.1)  # sum < 0: cat branch
    return ZooModel(m, torch.jit.script(m), _inp(x1, 3), _inp(x2, 5))


# --------------------------------------------------------------------------- multi output

class MultiOutput(nn.Module):
    """forward(x [B,8], y: Optional[Tensor]=None, scale: float=2.0)
         -> (Tensor, Dict[str, Tensor], List[Tensor])"""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor, y: Optional[torch.Tensor] = None,
                scale: float = 2.0
                ) -> Tuple[torch.Tensor, Dict[str, torch.Tensor], List[torch.Tensor]]:
        h = self.fc(x)
        if y is not None:
            h = h + y
        out = h * scale
        d: Dict[str, torch.Tensor] = {"relu": F.relu(out), "sum": out.sum(dim=1)}
        parts = list(torch.chunk(out, 2, dim=1))
        return out, d, parts


def multi_output() -> ZooModel:
    torch.manual_seed(8)
    m = MultiOutput().eval()
    g = torch.Generator().manual_seed(108)
    i1 = _inp(torch.randn(2, 8, generator=g), y=torch.randn(2, 8, generator=g), scale=3.0)
    i2 = _inp(torch.randn(5, 8, generator=g), y=torch.randn(5, 8, generator=g), scale=0.5)
    return ZooModel(m, torch.jit.script(m), i1, i2)


# --------------------------------------------------------------------------- chains

class ChainMul(nn.Module):
    """forward(x [1]) -> [1]: 100 out-of-place muls, alternating scalar / tensor."""

    def __init__(self):
        super().__init__()
        self.register_buffer("w", torch.tensor([1.0001]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.w
        for _ in range(50):
            x = x * 1.0001
            x = x * w
        return x


class ChainAdd(nn.Module):
    """forward(x [1]) -> [1]: 100 out-of-place adds, alternating scalar / tensor."""

    def __init__(self):
        super().__init__()
        self.register_buffer("w", torch.tensor([0.001]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.w
        for _ in range(50):
            x = x + 0.001
            x = x + w
        return x


def _unrolled(module: nn.Module) -> torch.jit.ScriptModule:
    # Script, then unroll the constant-trip-count loop so the graph is a straight
    # chain of 100 ops (the saved code contains the 100 calls explicitly).
    s = torch.jit.script(module)
    torch._C._jit_pass_loop_unrolling(s.graph)
    return s


def chain_mul100() -> ZooModel:
    torch.manual_seed(9)
    m = ChainMul().eval()
    return ZooModel(m, _unrolled(m), _inp(torch.tensor([1.5])), _inp(torch.tensor([-0.75])))


def chain_add100() -> ZooModel:
    torch.manual_seed(10)
    m = ChainAdd().eval()
    return ZooModel(m, _unrolled(m), _inp(torch.tensor([1.5])), _inp(torch.tensor([-0.75])))


# --------------------------------------------------------------------------- recurrent

TAGGER_VOCAB = 1000
TAGGER_TAGS = 12


class LSTMTagger(nn.Module):
    """forward(tokens [B,T] i64) -> [B,T,12] log-probabilities.

    Embedding(1000, 32) -> 2-layer bidirectional LSTM(32, 48, batch_first) -> Linear(96, 12)
    -> log_softmax. No initial state: nn.LSTM builds zeros (aten::zeros) itself.
    """

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(TAGGER_VOCAB, 32)
        self.lstm = nn.LSTM(32, 48, num_layers=2, bidirectional=True, batch_first=True)
        self.out = nn.Linear(96, TAGGER_TAGS)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h, _ = self.lstm(self.emb(tokens))
        return F.log_softmax(self.out(h), dim=-1)


def lstm_tagger() -> ZooModel:
    torch.manual_seed(11)
    m = LSTMTagger().eval()
    g = torch.Generator().manual_seed(111)
    return ZooModel(
        m,
        torch.jit.script(m),
        _inp(torch.randint(0, TAGGER_VOCAB, (1, 20), generator=g, dtype=torch.int64)),
        _inp(torch.randint(0, TAGGER_VOCAB, (3, 7), generator=g, dtype=torch.int64)),
    )


class GRUEncoder(nn.Module):
    """forward(x [T,B,24], h0 [1,B,40]) -> (output [T,B,40], h_n [1,B,40]).

    One-layer GRU(24, 40), sequence-first, with the initial hidden state as an input.
    """

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(24, 40)

    def forward(self, x: torch.Tensor, h0: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        out, h = self.gru(x, h0)
        return out, h


def gru_encoder() -> ZooModel:
    torch.manual_seed(12)
    m = GRUEncoder().eval()
    g = torch.Generator().manual_seed(112)
    return ZooModel(
        m,
        torch.jit.script(m),
        _inp(torch.randn(16, 1, 24, generator=g), torch.randn(1, 1, 40, generator=g)),
        _inp(torch.randn(5, 4, 24, generator=g), torch.randn(1, 4, 40, generator=g)),
    )


# --------------------------------------------------------------------------- batched inputs

def _images(batch: int, seed: int):
    # A generator of its own per file, so adding a batch size never changes the values
    # of another inputs file (outputs stay reproducible).
    g = torch.Generator().manual_seed(seed)
    return _inp(torch.randn(batch, 3, 224, 224, generator=g))


# Extra input sets at larger batch sizes, written as <name>.b<N>.inputs.pt (the memory
# benchmark's batch-8 numbers: `brisk bench resnet18 --batch 8 --memory`).
BATCH_INPUTS = collections.OrderedDict([
    ("resnet18", {8: lambda: _images(8, 201)}),
    ("mobilenet_v2", {8: lambda: _images(8, 202)}),
])


MODELS = collections.OrderedDict([
    ("resnet18", resnet18),
    ("mobilenet_v2", mobilenet_v2),
    ("mlp", mlp),
    ("deepandwide", deepandwide),
    ("transformer", transformer),
    ("inception_fork", inception_fork),
    ("inception_nofork", inception_nofork),
    ("control_flow", control_flow),
    ("multi_output", multi_output),
    ("chain_mul100", chain_mul100),
    ("chain_add100", chain_add100),
    ("lstm_tagger", lstm_tagger),
    ("gru_encoder", gru_encoder),
])
