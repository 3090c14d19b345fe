"""Test-model zoo for brisk: small TorchScript models with random weights.

Every builder takes no arguments, seeds torch itself, and returns a `ZooModel`:
  eager    -- the nn.Module in eval mode
  scripted -- torch.jit.script(eager) (or torch.jit.trace where noted)
  inputs   -- (args, kwargs) example inputs
  inputs2  -- (args, kwargs) second inputs (different shape where the model allows)

See README.md for the on-disk format written by export.py.
"""

import collections
import math
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


# --------------------------------------------------------------------------- model families
# Small, randomly initialised members of the families users run (families.md-style list in
# README.md): reduced widths / depths / resolutions keep each file under ~3 MB and each
# export to a few seconds. inputs and inputs2 have the same shapes (batch 2) and different
# values, so the static PT2 programs accept both sets.

FAMILY_BATCH = 2


def _image_pair(seed: int, size: int):
    g = torch.Generator().manual_seed(seed)
    return (_inp(torch.randn(FAMILY_BATCH, 3, size, size, generator=g)),
            _inp(torch.randn(FAMILY_BATCH, 3, size, size, generator=g)))


def _vision(m: nn.Module, seed: int, size: int) -> ZooModel:
    m = m.eval()
    inputs, inputs2 = _image_pair(seed, size)
    return ZooModel(m, torch.jit.script(m), inputs, inputs2)


def efficientnet_b0() -> ZooModel:
    # EfficientNet-B0's block layout at half width and half depth, 10 classes.
    from torchvision.models import efficientnet

    torch.manual_seed(21)
    setting, last = efficientnet._efficientnet_conf("efficientnet_b0", width_mult=0.5, depth_mult=0.5)
    return _vision(efficientnet.EfficientNet(setting, 0.2, last_channel=last, num_classes=10), 121, 64)


def mobilenet_v3_small() -> ZooModel:
    import torchvision

    torch.manual_seed(22)
    return _vision(torchvision.models.mobilenet_v3_small(weights=None, num_classes=10, width_mult=0.5), 122, 64)


def mnasnet0_5() -> ZooModel:
    import torchvision

    torch.manual_seed(23)
    return _vision(torchvision.models.mnasnet0_5(weights=None, num_classes=10), 123, 64)


def regnet_y_400mf() -> ZooModel:
    # RegNetY-400MF's width rule (w_0 48, w_a 27.89, w_m 2.09, groups of 8, SE 0.25) at
    # depth 6 instead of 16, 10 classes.
    from torchvision.models.regnet import BlockParams, RegNet

    torch.manual_seed(24)
    params = BlockParams.from_init_params(depth=6, w_0=48, w_a=27.89, w_m=2.09, group_width=8, se_ratio=0.25)
    return _vision(RegNet(params, num_classes=10), 124, 64)


def swin_tiny() -> ZooModel:
    # Two stages (16x16 then 8x8 tokens): window 4 with the shifted-window attention mask
    # in the second block of each stage.
    from torchvision.models.swin_transformer import SwinTransformer

    torch.manual_seed(25)
    m = SwinTransformer(patch_size=[4, 4], embed_dim=32, depths=[2, 2], num_heads=[2, 4], window_size=[4, 4],
                        stochastic_depth_prob=0.0, num_classes=10)
    return _vision(m, 125, 64)


def maxvit_tiny() -> ZooModel:
    # Stem 16 channels, two MaxVit blocks (32, 64 channels; 16x16 then 8x8), partitions
    # of 4x4, heads of 16 dims.
    from torchvision.models.maxvit import MaxVit

    torch.manual_seed(26)
    m = MaxVit(input_size=(64, 64), stem_channels=16, partition_size=4, block_channels=[32, 64],
               block_layers=[1, 1], head_dim=16, stochastic_depth_prob=0.0, num_classes=10)
    return _vision(m, 126, 64)


def vit_tiny() -> ZooModel:
    from torchvision.models.vision_transformer import VisionTransformer

    torch.manual_seed(27)
    m = VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=64, mlp_dim=128,
                          num_classes=10)
    return _vision(m, 127, 32)


BERT_VOCAB, BERT_HIDDEN, BERT_HEADS, BERT_FF, BERT_MAX_POS, BERT_SEQ = 1000, 64, 2, 128, 64, 16


class BertLayer(nn.Module):
    """Post-LN BERT encoder layer: self-attention written out (as HF BERT does), gelu FFN."""

    def __init__(self):
        super().__init__()
        self.q = nn.Linear(BERT_HIDDEN, BERT_HIDDEN)
        self.k = nn.Linear(BERT_HIDDEN, BERT_HIDDEN)
        self.v = nn.Linear(BERT_HIDDEN, BERT_HIDDEN)
        self.attn_out = nn.Linear(BERT_HIDDEN, BERT_HIDDEN)
        self.ln1 = nn.LayerNorm(BERT_HIDDEN, eps=1e-12)
        self.ff1 = nn.Linear(BERT_HIDDEN, BERT_FF)
        self.ff2 = nn.Linear(BERT_FF, BERT_HIDDEN)
        self.ln2 = nn.LayerNorm(BERT_HIDDEN, eps=1e-12)
        # Plain int attributes: TorchScript reads module attributes, not Python globals.
        self.heads = BERT_HEADS
        self.head_dim = BERT_HIDDEN // BERT_HEADS

    def _heads(self, x: torch.Tensor) -> torch.Tensor:
        b, t = x.size(0), x.size(1)
        return x.view(b, t, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x: torch.Tensor, mask_bias: torch.Tensor) -> torch.Tensor:
        q, k, v = self._heads(self.q(x)), self._heads(self.k(x)), self._heads(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = F.softmax(scores + mask_bias, dim=-1)
        ctx = torch.matmul(probs, v).transpose(1, 2).contiguous()
        ctx = ctx.view(x.size(0), x.size(1), self.heads * self.head_dim)
        x = self.ln1(x + self.attn_out(ctx))
        return self.ln2(x + self.ff2(F.gelu(self.ff1(x))))


class BertTiny(nn.Module):
    """forward(input_ids [B,T] i64, attention_mask [B,T] i64) -> (sequence [B,T,64], pooled [B,64]).

    Word + position + token-type (all 0) embeddings, LayerNorm, 2 encoder layers, tanh pooler
    over the first token; padding positions (mask 0) get -10000 added to their scores.
    """

    def __init__(self):
        super().__init__()
        self.word = nn.Embedding(BERT_VOCAB, BERT_HIDDEN, padding_idx=0)
        self.position = nn.Embedding(BERT_MAX_POS, BERT_HIDDEN)
        self.token_type = nn.Embedding(2, BERT_HIDDEN)
        self.register_buffer("position_ids", torch.arange(BERT_MAX_POS).unsqueeze(0))
        self.ln = nn.LayerNorm(BERT_HIDDEN, eps=1e-12)
        self.layers = nn.ModuleList([BertLayer() for _ in range(2)])
        self.pooler = nn.Linear(BERT_HIDDEN, BERT_HIDDEN)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        t = input_ids.size(1)
        pos = self.position_ids[:, :t]
        types = torch.zeros_like(input_ids)
        x = self.ln(self.word(input_ids) + self.position(pos) + self.token_type(types))
        mask_bias = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, mask_bias)
        return x, torch.tanh(self.pooler(x[:, 0]))


def _bert_inputs(g: torch.Generator):
    ids = torch.randint(1, BERT_VOCAB, (FAMILY_BATCH, BERT_SEQ), generator=g, dtype=torch.int64)
    mask = torch.ones(FAMILY_BATCH, BERT_SEQ, dtype=torch.int64)
    ids[1, 11:] = 0  # the second sequence is padded
    mask[1, 11:] = 0
    return _inp(ids, mask)


def bert_tiny() -> ZooModel:
    torch.manual_seed(28)
    m = BertTiny().eval()
    g = torch.Generator().manual_seed(128)
    return ZooModel(m, torch.jit.script(m), _bert_inputs(g), _bert_inputs(g))


DET_CLASSES, DET_CH, DET_TOPK = 4, 32, 20


class DetHead(nn.Module):
    """FCOS / RetinaNet-style dense head over two pyramid levels.

    forward(p3 [B,32,16,16], p4 [B,32,8,8]) -> (scores [B,20], labels [B,20] i64, boxes [B,20,4]).
    A shared tower (conv3x3 + GroupNorm + ReLU, twice) per level, class logits and box
    distances; levels concatenated to [B, 320 anchors, ...]; topk over the flattened
    sigmoid scores, anchor = index // classes and label = index % classes (torchvision's
    postprocessing), boxes gathered per anchor and scaled by each anchor's level stride
    (index_select).
    """

    def __init__(self):
        super().__init__()
        tower = []
        for _ in range(2):
            tower += [nn.Conv2d(DET_CH, DET_CH, 3, padding=1), nn.GroupNorm(8, DET_CH), nn.ReLU()]
        self.tower = nn.Sequential(*tower)
        self.cls = nn.Conv2d(DET_CH, DET_CLASSES, 3, padding=1)
        self.box = nn.Conv2d(DET_CH, 4, 3, padding=1)
        self.classes = DET_CLASSES
        self.k = DET_TOPK
        self.register_buffer("anchor_stride", torch.cat([torch.full((16 * 16,), 8.0), torch.full((8 * 8,), 16.0)]))

    def _level(self, p: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        t = self.tower(p)
        b = p.size(0)
        cls = self.cls(t).permute(0, 2, 3, 1).reshape(b, -1, self.classes)
        box = F.relu(self.box(t)).permute(0, 2, 3, 1).reshape(b, -1, 4)
        return cls, box

    def forward(self, p3: torch.Tensor, p4: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        c3, b3 = self._level(p3)
        c4, b4 = self._level(p4)
        cls = torch.cat([c3, c4], dim=1)
        box = torch.cat([b3, b4], dim=1)
        scores, idx = torch.sigmoid(cls).flatten(1).topk(self.k, dim=1)
        anchor = torch.div(idx, self.classes, rounding_mode="floor")
        labels = idx % self.classes
        boxes = torch.gather(box, 1, anchor.unsqueeze(-1).expand(-1, -1, 4))
        stride = torch.index_select(self.anchor_stride, 0, anchor.reshape(-1)).view(anchor.shape)
        return scores, labels, boxes * stride.unsqueeze(-1)


def _det_inputs(g: torch.Generator):
    return _inp(torch.randn(FAMILY_BATCH, DET_CH, 16, 16, generator=g),
                torch.randn(FAMILY_BATCH, DET_CH, 8, 8, generator=g))


def det_head() -> ZooModel:
    torch.manual_seed(29)
    m = DetHead().eval()
    g = torch.Generator().manual_seed(129)
    return ZooModel(m, torch.jit.script(m), _det_inputs(g), _det_inputs(g))


AUDIO_LEN = 1024


class Audio1d(nn.Module):
    """forward(wave [B,1,1024]) -> [B,8,256]: a strided conv1d front end with GroupNorm,
    a padded residual block, nearest upsampling x2 and a 1x1 projection."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(1, 16, 9, stride=4, padding=4)
        self.gn1 = nn.GroupNorm(4, 16)
        self.conv2 = nn.Conv1d(16, 32, 5, stride=2, padding=2)
        self.gn2 = nn.GroupNorm(8, 32)
        self.res = nn.Conv1d(32, 32, 3)
        self.proj = nn.Conv1d(32, 8, 1)

    def forward(self, wave: torch.Tensor) -> torch.Tensor:
        x = F.gelu(self.gn1(self.conv1(wave)))
        x = F.relu(self.gn2(self.conv2(x)))
        x = x + self.res(F.pad(x, (1, 1)))
        x = F.interpolate(x, scale_factor=2.0, mode="nearest")
        return self.proj(x)


def audio_1d() -> ZooModel:
    torch.manual_seed(30)
    m = Audio1d().eval()
    g = torch.Generator().manual_seed(130)
    return ZooModel(m, torch.jit.script(m), _inp(torch.randn(FAMILY_BATCH, 1, AUDIO_LEN, generator=g)),
                    _inp(torch.randn(FAMILY_BATCH, 1, AUDIO_LEN, generator=g)))


DLRM_TABLES, DLRM_ROWS, DLRM_DIM, DLRM_DENSE, DLRM_IDS = 3, 200, 16, 13, 4


class DlrmTiny(nn.Module):
    """forward(dense [B,13] f32, ids [3, B*4] i64, offsets [3, B] i64) -> [B,1].

    DLRM: a bottom MLP on the dense features, three EmbeddingBag tables (padding_idx 0;
    sum, mean, sum), the pairwise dot products of the four 16-d vectors (bmm, then the
    strict lower triangle picked with index_select), a top MLP and a sigmoid.
    """

    def __init__(self):
        super().__init__()
        self.tables = nn.ModuleList([
            nn.EmbeddingBag(DLRM_ROWS, DLRM_DIM, mode="mean" if t == 1 else "sum", padding_idx=0)
            for t in range(DLRM_TABLES)])
        self.bottom = nn.Sequential(nn.Linear(DLRM_DENSE, 32), nn.ReLU(), nn.Linear(32, DLRM_DIM), nn.ReLU())
        n = DLRM_TABLES + 1
        self.register_buffer("tri", torch.tensor([i * n + j for i in range(n) for j in range(i)], dtype=torch.int64))
        self.top = nn.Sequential(nn.Linear(DLRM_DIM + n * (n - 1) // 2, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, dense: torch.Tensor, ids: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        x = self.bottom(dense)
        feats: List[torch.Tensor] = [x]
        for t, table in enumerate(self.tables):
            feats.append(table(ids[t], offsets[t]))
        t = torch.stack(feats, dim=1)
        z = torch.bmm(t, t.transpose(1, 2)).flatten(1)
        inter = torch.index_select(z, 1, self.tri)
        return torch.sigmoid(self.top(torch.cat([x, inter], dim=1)))


def _dlrm_inputs(g: torch.Generator):
    dense = torch.randn(FAMILY_BATCH, DLRM_DENSE, generator=g)
    ids = torch.randint(0, DLRM_ROWS, (DLRM_TABLES, FAMILY_BATCH * DLRM_IDS), generator=g, dtype=torch.int64)
    ids[:, ::3] = 0  # padding entries in every table
    offsets = (torch.arange(FAMILY_BATCH, dtype=torch.int64) * DLRM_IDS).repeat(DLRM_TABLES, 1).contiguous()
    return _inp(dense, ids, offsets)


def dlrm_tiny() -> ZooModel:
    torch.manual_seed(31)
    m = DlrmTiny().eval()
    g = torch.Generator().manual_seed(131)
    return ZooModel(m, torch.jit.script(m), _dlrm_inputs(g), _dlrm_inputs(g))


# The families above, in MODELS order (tests/zoo_families_test.cc runs these).
FAMILY_MODELS = ["efficientnet_b0", "mobilenet_v3_small", "mnasnet0_5", "regnet_y_400mf", "swin_tiny",
                 "maxvit_tiny", "vit_tiny", "bert_tiny", "det_head", "audio_1d", "dlrm_tiny"]


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
] + [(name, globals()[name]) for name in FAMILY_MODELS])
