"""Random torch.export programs for the PT2 differential test (pt2_differential_test.py).

generate(base, index) -> Pt2Program: Python source of a torch.nn.Module `Program`, a
function `dynamic_shapes()` giving its torch.export constraints, and a description of
its inputs from which inputs of any size (valid or violating a constraint) are made.
Program (base, index) depends on nothing else, so a seed reproduces it:

    python3 tests/differential/pt2_gen.py BASE INDEX    # print its source

What the programs exercise (each drawn per program):
  - dynamic dims: a batch dim `b` shared by several inputs (Dim("b", min, max)), a derived
    dim `b + 1` on one input, a second independent dim `c`, static feature dims;
  - pytree inputs: a plain tensor, a tuple, a dict, a namedtuple;
  - statements on [b, F] values: pointwise ops, Linear layers, Python arithmetic on
    sym sizes, torch.cond (data- and shape-dependent predicates, branches with their own
    parameters), while_loop (a 0-d int64 counter and carried tensors, bodies reading outer
    values and parameters);
  - pytree outputs: a tensor, a tuple, a dict, a namedtuple, nested; values of other shapes
    ([b], [b + c, F]) and sometimes a sym int.

Validity by construction: every value in the pool has shape [b, F], so every op applies;
the dims stay symbolic (no op compares b with a constant outside a cond predicate).
"""
import random
import sys
import zlib
from dataclasses import dataclass, field

import torch

F = 4  # the feature dim of every [b, F] value; static in every program

# Input leaf kinds: which dim 0 they have.
B, B1, C = "b", "b+1", "c"


@dataclass
class Leaf:
    path: str     # how forward reaches it: "x", "pair[1]", "d['u']", "nt.lo"
    dim0: str     # B, B1 or C
    dtype: torch.dtype = torch.float32


@dataclass
class Pt2Program:
    seed: tuple
    source_text: str
    inputs: list            # [(arg name, kind: "tensor"|"tuple"|"dict"|"namedtuple", [Leaf])]
    b_range: tuple          # (min, max) of Dim b
    c_range: tuple
    sizes: dict = field(default_factory=dict)  # {"main": {"b":..,"c":..}, "alt": {...}}

    def source(self):
        return self.source_text

    @property
    def leaves(self):
        return [leaf for _, _, leaves in self.inputs for leaf in leaves]

    def uses(self, dim0):
        return sum(leaf.dim0 == dim0 for leaf in self.leaves)


class _Gen:
    def __init__(self, rng, seed, b_range):
        self.rng = rng
        self.seed = seed
        self.b_range = b_range
        self.has_loop = self.has_shape_cond = False
        self.lines = []       # forward's body
        self.helpers = []     # module-level defs (cond branches, loop bodies)
        self.layers = 0
        self.pool = []        # names of [b, F] values
        self.extra_out = []   # (name, description) of values of other shapes
        self.n = 0

    def fresh(self, prefix="v"):
        self.n += 1
        return f"{prefix}{self.n}"

    def linear(self):
        name = f"lin{self.layers}"
        self.layers += 1
        return name

    # --- expressions on [b, F] values -------------------------------------------------
    def pointwise(self, a, b, depth=0):
        """An expression of shape [b, F] from the [b, F] names a and b."""
        r = self.rng
        k = r.randrange(9)
        if k == 0:
            return f"{a} + {b}"
        if k == 1:
            return f"{a} * {b}"
        if k == 2:
            return f"{a} - {b} * {r.choice(['0.5', '2.0', '0.25'])}"
        if k == 3:
            return f"torch.{r.choice(['tanh', 'sigmoid', 'relu'])}({a})"
        if k == 4:
            return f"self.{self.linear()}({a})"
        if k == 5:  # Python arithmetic on a sym size
            return f"{a} * ({a}.shape[0] + {r.randint(1, 3)}) * 0.1"
        if k == 6:
            return f"torch.clamp({a}, min={r.choice(['-0.5', '-1.0'])}, max={r.choice(['0.5', '1.0'])})"
        if k == 7:
            return f"{a} / ({b}.abs() + 1.0)"
        return f"({a} + {b}.mean(1, keepdim=True)) * 0.5"

    def statement(self):
        r = self.rng
        a, b = r.choice(self.pool), r.choice(self.pool)
        k = r.random()
        if k < 0.45:
            v = self.fresh()
            self.lines.append(f"{v} = {self.pointwise(a, b)}")
            self.pool.append(v)
        elif k < 0.7:
            self.cond(a, b)
        elif k < 0.9 and not self.has_shape_cond:  # see cond()
            self.while_loop(a, b)
        else:
            v = self.fresh()
            self.lines.append(f"{v} = {self.pointwise(a, b)}")
            self.pool.append(v)

    def branch_fn(self, name, n_args):
        """A module-level function of n_args [b, F] tensors returning one of shape [b, F]
        (a closure over self for Linear layers: branches are defined in forward)."""
        args = [f"p{i}" for i in range(n_args)]
        body, local = [], list(args)
        for _ in range(self.rng.randint(1, 3)):
            v = self.fresh("t")
            body.append(f"{v} = {self.pointwise(self.rng.choice(local), self.rng.choice(local))}")
            local.append(v)
        body.append(f"return {local[-1]}")
        return [f"def {name}({', '.join(args)}):"] + ["    " + line for line in body]

    def cond(self, a, b):
        r = self.rng
        t, f = self.fresh("true_fn"), self.fresh("false_fn")
        for line in self.branch_fn(t, 2) + self.branch_fn(f, 2):
            self.lines.append(line)
        # A shape predicate compares x's b with a constant inside its range. One the range
        # decides (b > 3 with min 4), or one in a program that also has a while_loop
        # (seeds (1, 27) and (1, 30) before this rule), makes torch.export fail inside
        # dynamo ("'<' not supported between instances of 'NoneType' and 'int'").
        lo, hi = self.b_range
        preds = [f"{a}.sum() > 0", f"{a}.mean() < {b}.mean()"]
        if not self.has_loop:
            preds.append(f"x.shape[0] > {r.randint(lo, hi - 1)}")
        pred = r.choice(preds)
        self.has_shape_cond |= pred.startswith("x.shape")
        v = self.fresh()
        self.lines.append(f"{v} = torch.cond({pred}, {t}, {f}, ({a}, {b}))")
        self.pool.append(v)

    def while_loop(self, a, b):
        r = self.rng
        self.has_loop = True
        body = self.fresh("body")
        h_expr = self.pointwise("h", "h")
        outer = r.choice(self.pool)
        n = r.randint(0, 4)
        # The carried value starts as a clone: while_loop refuses a carried input that is
        # also read by the body as an outer value ("might be aliasing the input").
        self.lines += [f"def {body}(i, h):",
                       f"    return i + 1, ({h_expr}) * 0.5 + {outer} * {r.choice(['0.1', '0.5'])}"]
        i, v = self.fresh("i"), self.fresh()
        start = r.choice(["zeros", "ones"])
        self.lines.append(f"{i}, {v} = while_loop(lambda i, h: i < {n}, {body}, "
                          f"(torch.{start}((), dtype=torch.int64), {a}.clone()))")
        self.pool.append(v)
        if r.random() < 0.3:
            self.extra_out.append(i)


def _inputs(rng):
    """[(arg name, kind, [Leaf])]: the first input is always a [b, F] tensor x."""
    ins = [("x", "tensor", [Leaf("x", B)])]
    kinds = rng.sample(["tuple", "dict", "namedtuple", "tensor"], rng.randint(0, 3))
    dims = [B, B1, C]
    for k, kind in enumerate(kinds):
        name = {"tuple": "pair", "dict": "d", "namedtuple": "nt", "tensor": f"y{k}"}[kind]
        if kind == "tensor":
            ins.append((name, kind, [Leaf(name, rng.choice(dims))]))
        elif kind == "tuple":
            ins.append((name, kind, [Leaf(f"{name}[0]", B), Leaf(f"{name}[1]", rng.choice(dims))]))
        elif kind == "dict":
            ins.append((name, kind, [Leaf(f"{name}['u']", rng.choice(dims)), Leaf(f"{name}['v']", B)]))
        else:
            ins.append((name, kind, [Leaf(f"{name}.lo", B), Leaf(f"{name}.hi", rng.choice(dims))]))
    return ins




def _spec_of(leaf_dim0):
    return {B: "{0: b}", B1: "{0: b + 1}", C: "{0: c}"}[leaf_dim0]


def generate(base, index):
    seed = (base, index)
    rng = random.Random(f"pt2:{base}:{index}")
    ins = _inputs(rng)
    lo = rng.randint(2, 4)
    hi = lo + rng.randint(4, 12)
    g = _Gen(rng, seed, (lo, hi))
    c_lo, c_hi = 2, rng.randint(5, 9)

    for _, _, leaves in ins:
        for leaf in leaves:
            if leaf.dim0 == B:
                if leaf.path != "x":
                    # Through a broadcast with x: torch.export gives each input's dim its
                    # own symbol, and a torch.cond whose branches return values of two
                    # inputs cannot unify them ("Could not guard on data-dependent
                    # expression"); the broadcast's guard makes its size x's.
                    v = g.fresh()
                    g.lines.append(f"{v} = {leaf.path} - x * 0.5")
                    g.pool.append(v)
                else:
                    g.pool.append("x")
                continue
            # [b + 1, F] and [c, F]: their column means broadcast over b. A slice
            # leaf[1:] is not put in the pool: torch.export cannot unify its size (b + 1) - 1
            # with b across torch.cond branches ("Could not guard on data-dependent
            # expression"), so it only reaches the outputs.
            v = g.fresh()
            g.lines.append(f"{v} = x + {leaf.path}.mean(0, keepdim=True)")
            g.pool.append(v)
            g.extra_out.append(f"{leaf.path}[1:] * 2" if leaf.dim0 == B1
                               else f"torch.cat([x, {leaf.path}])")  # [b, F] or [b + c, F]
    for _ in range(rng.randint(2, 6)):
        g.statement()

    # Outputs: the last value, a few others, sometimes a reduction, a sym int.
    outs = [g.pool[-1]] + rng.sample(g.pool, min(len(g.pool), rng.randint(0, 2)))
    if rng.random() < 0.4:
        outs.append(f"{rng.choice(g.pool)}.sum(1)")  # [b]
    if g.extra_out and rng.random() < 0.7:
        outs.append(rng.choice(g.extra_out))
    if rng.random() < 0.15:
        outs.append("x.shape[0] * 2")  # a sym int output
    kind = rng.choice(["single", "tuple", "dict", "namedtuple", "nested"]) if len(outs) > 1 else "single"
    nt_decl = ""
    if kind == "single":
        ret = outs[0]
    elif kind == "tuple":
        ret = "(" + ", ".join(outs) + ",)"
    elif kind == "dict":
        ret = "{" + ", ".join(f"'k{i}': {o}" for i, o in enumerate(outs)) + "}"
    elif kind == "namedtuple":
        fields = [f"f{i}" for i in range(len(outs))]
        # The class is bound to its own name too: pickle (the forked child's results)
        # finds a class by module and name.
        nt_decl = f"Out = Out_{base}_{index} = collections.namedtuple('Out_{base}_{index}', {fields!r})\n" \
                  f"_register_namedtuple(Out, serialized_type_name='brisk_diff.Out_{base}_{index}')\n"
        ret = "Out(" + ", ".join(outs) + ")"
    else:
        ret = "{'first': " + outs[0] + ", 'rest': (" + ", ".join(outs[1:]) + ",)}"

    params = ", ".join(name for name, _, _ in ins)
    layers = "".join(f"        self.lin{i} = torch.nn.Linear({F}, {F})\n" for i in range(g.layers))
    body = "".join(f"        {line}\n" for line in g.lines)
    spec_items = []
    for name, kind_, leaves in ins:
        specs = [_spec_of(leaf.dim0) for leaf in leaves]
        if kind_ == "tensor":
            spec_items.append(f"{name!r}: {specs[0]}")
        elif kind_ == "tuple":
            spec_items.append(f"{name!r}: ({specs[0]}, {specs[1]})")
        elif kind_ == "dict":
            spec_items.append(f"{name!r}: {{'u': {specs[0]}, 'v': {specs[1]}}}")
        else:
            spec_items.append(f"{name!r}: NT({specs[0]}, {specs[1]})")
    src = (
        f"# PT2 differential program, seed ({base}, {index})\n"
        "import collections\n"
        "import torch\n"
        "from torch.export import Dim\n"
        "from torch._higher_order_ops.while_loop import while_loop\n"
        "from torch.utils._pytree import _register_namedtuple\n\n"
        f"NT = NT_{base}_{index} = collections.namedtuple('NT_{base}_{index}', ['lo', 'hi'])\n"
        f"_register_namedtuple(NT, serialized_type_name='brisk_diff.NT_{base}_{index}')\n"
        f"{nt_decl}\n\n"
        "class Program(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        f"{layers}"
        "        torch.manual_seed(0)\n"
        "        for p in self.parameters():\n"
        "            torch.nn.init.uniform_(p, -0.5, 0.5)\n\n"
        f"    def forward(self, {params}):\n"
        f"{body}"
        f"        return {ret}\n\n\n"
        "def dynamic_shapes():\n"
        f"    b = Dim('b', min={lo}, max={hi})\n"
        f"    c = Dim('c', min={c_lo}, max={c_hi})\n"
        f"    return {{{', '.join(spec_items)}}}\n"
    )
    p = Pt2Program(seed, src, ins, (lo, hi), (c_lo, c_hi))
    b0 = rng.randint(lo, hi)
    b1 = rng.choice([n for n in range(lo, hi + 1) if n != b0])
    p.sizes = {"main": {"b": b0, "c": rng.randint(c_lo, c_hi)}, "alt": {"b": b1, "c": rng.randint(c_lo, c_hi)}}
    return p


def _dim0(leaf, sizes):
    return {B: sizes["b"], B1: sizes["b"] + 1, C: sizes["c"]}[leaf.dim0]


def make_inputs(program, module_ns, sizes, tag, override=None):
    """(args tuple) of the program for these dim sizes; override maps a leaf path to a
    shape replacing the valid one (a constraint violation). module_ns gives the NT class."""
    g = torch.Generator().manual_seed(zlib.crc32(repr((program.seed, tag)).encode()))
    override = override or {}

    def leaf_tensor(leaf):
        shape = override.get(leaf.path, (_dim0(leaf, sizes), F))
        return torch.randn(*shape, generator=g)

    args = []
    for name, kind, leaves in program.inputs:
        t = [leaf_tensor(leaf) for leaf in leaves]
        if kind == "tensor":
            args.append(t[0])
        elif kind == "tuple":
            args.append((t[0], t[1]))
        elif kind == "dict":
            args.append({"u": t[0], "v": t[1]})
        else:
            args.append(module_ns.NT(t[0], t[1]))
    return tuple(args)


def violations(program):
    """[(name, sizes, override)]: inputs that break one constraint each, so ep.module()
    must refuse them. override: {leaf path: shape}."""
    lo, hi = program.b_range
    main = program.sizes["main"]
    out = [("b above max", dict(main, b=hi + 1), {}),
           ("b below min", dict(main, b=lo - 1), {})]
    leaves = program.leaves
    b_leaves = [leaf for leaf in leaves if leaf.dim0 == B]
    if len(b_leaves) >= 2:  # a shared dim that differs between two inputs
        out.append((f"shared dim b: {b_leaves[-1].path} one longer", main,
                    {b_leaves[-1].path: (main["b"] + 1, F)}))
    for leaf in leaves:
        if leaf.dim0 == B1:  # a derived dim that is not b + 1
            out.append((f"derived dim b + 1: {leaf.path} is b + 2", main, {leaf.path: (main["b"] + 2, F)}))
            break
    out.append((f"static dim: {leaves[0].path} has {F + 1} features", main,
                {leaves[0].path: (_dim0(leaves[0], main), F + 1)}))
    return out


if __name__ == "__main__":
    p = generate(int(sys.argv[1]), int(sys.argv[2]))
    print(p.source())
    print(f"# inputs: {p.inputs}\n# sizes: {p.sizes}")
