"""Generates small random TorchScript programs (Python source of a torch.nn.Module).

    program = generate(base_seed, index)          # same (base, index) -> same program
    print(program.source())
    args = make_inputs(program, "main")           # or "alt": same ranks, other sizes

Every program is valid TorchScript and deterministic by construction: the generator
tracks, for each variable, its TorchScript type, its shape as values under both input
shapes (so a program is valid for both), and which variables may share memory (a
union-find over storages), so that in-place ops never write to an input unless the
program is meant to (`Program.mutates_inputs`), never write to an expanded
(self-overlapping) view, never partially overlap their own argument, and never make a
result depend on whether reshape/contiguous/flatten returned a view or a copy
(undefined in PyTorch).

Each program has a family, whose statement templates it draws most of its statements
from; see FAMILIES. The families aim at brisk's riskiest paths: values that control
flow returns or carries more than once, views and aliasing, in-place ops, containers,
and vararg ops (print, str.format) on the fallback path.
"""
import random
import sys

from program_ast import Compound, Line, Program

FAMILIES = ["control_flow", "views", "containers", "inplace", "vararg", "scalars", "pointwise"]

# Print/format arguments that are big ints: int64 values that do not fit in 32 bits
# are where a vararg op that reads its arguments with the wrong type goes wrong.
INT_FACTORS = [1, 3, -7, 1000, 50000000, 3000000000]


class Dim:
    """One dimension: a TorchScript int expression (None if it has none) and its value
    under the main and the alt input shapes. Dims compare by value, so two tensors can
    be combined exactly when their shapes agree under both input shapes."""

    def __init__(self, expr, vals):
        self.expr, self.vals = expr, tuple(vals)

    def min(self):
        return min(self.vals)

    def times(self, other):
        expr = None if self.expr is None or other.expr is None else f"({self.expr}) * ({other.expr})"
        return Dim(expr, (a * b for a, b in zip(self.vals, other.vals)))

    def minus(self, c):
        return Dim(None if self.expr is None else f"({self.expr}) - {c}", (v - c for v in self.vals))


def const(c):
    return Dim(str(c), (c, c))


_unknown = [0]


def unknown_dim():
    """A size the generator does not know (a loop may have appended): unique, so it
    never matches another tensor's size."""
    _unknown[0] += 1
    return Dim(None, (-_unknown[0], -_unknown[0]))


def shape_key(shape):
    return tuple(d.vals for d in shape)


class Storage:
    """Union-find class of tensors that may share memory. `input`: may be an input's
    memory. `frozen`: some alias may or may not be a copy, so no in-place op may touch it."""

    def __init__(self, input=False):
        self.parent, self.input, self.frozen = None, input, False

    def root(self):
        s = self
        while s.parent is not None:
            s = s.parent
        return s


def union(*storages):
    roots = []
    for s in storages:
        r = s.root()
        if all(r is not q for q in roots):
            roots.append(r)
    head = roots[0]
    for r in roots[1:]:
        r.parent = head
        head.input |= r.input
        head.frozen |= r.frozen
    return head


class V:
    """A variable. kind: T (tensor), int, float, str, bool, LT (List[Tensor]), LI
    (List[int]), DT (Dict[str, Tensor]), DI (Dict[str, int]), TUP."""

    def __init__(self, name, kind, **kw):
        self.name, self.kind = name, kind
        self.shape, self.dtype, self.storage = (), "float", None
        self.overlapping = False  # an expanded view: in-place ops on it are invalid
        self.noinplace = False  # a loop-carried value inside its loop body
        self.contig = False  # known contiguous (elementwise results keep their input's layout)
        self.exact = True  # a float whose value does not depend on rounding (printable)
        self.box = None  # containers: shared by aliases (l2 = l)
        self.elems = None  # TUP: element variables
        self.__dict__.update(kw)

    def copy(self, **kw):
        v = V(self.name, self.kind)
        v.__dict__.update(self.__dict__)
        v.__dict__.update(kw)
        return v

    def tstype(self):
        if self.kind == "TUP":
            return "Tuple[" + ", ".join(e.tstype() for e in self.elems) + "]"
        return {"T": "Tensor", "int": "int", "float": "float", "str": "str", "bool": "bool",
                "LT": "List[Tensor]", "LI": "List[int]", "DT": "Dict[str, Tensor]",
                "DI": "Dict[str, int]"}[self.kind]


class Box:
    """A list's or dict's state, shared by every alias of it. min_len/keys only grow at
    the depth the container was made at (an append inside a branch or loop may not run)."""

    def __init__(self, depth, shape=(), storage=None, min_len=0, keys=()):
        self.depth, self.shape, self.storage = depth, shape, storage
        self.min_len, self.keys = min_len, list(keys)


class Scope:
    def __init__(self, vars, depth, loop_vars=()):
        self.vars, self.depth, self.loop_vars = vars, depth, list(loop_vars)

    def child(self):
        return Scope(dict(self.vars), self.depth + 1, self.loop_vars)

    def add(self, v):
        self.vars.pop(v.name, None)
        self.vars[v.name] = v  # re-insert: most recent last
        return v

    def of(self, kind, pred=lambda v: True):
        return [v for v in self.vars.values() if v.kind == kind and pred(v)]


def is_float_t(v):
    return v.kind == "T" and v.dtype == "float"


class Generator:
    def __init__(self, rng, family, dims):
        self.rng, self.family = rng, family
        self.N, self.M = dims
        self.counter = 0
        self.mutates_inputs = family == "inplace" and rng.random() < 0.3
        self.max_depth = 2

    # --- helpers ---------------------------------------------------------------
    def fresh(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def choice(self, xs):
        return self.rng.choice(xs) if xs else None

    def recent(self, xs):
        """Pick one, favouring the most recently defined (they carry the interesting values)."""
        if not xs:
            return None
        w = [1 + i for i in range(len(xs))]
        return self.rng.choices(xs, weights=w)[0]

    def float_ts(self, scope, pred=lambda v: True):
        return scope.of("T", lambda v: v.dtype == "float" and pred(v))

    def same_shape(self, scope, a, pred=lambda v: True):
        return self.float_ts(scope, lambda v: shape_key(v.shape) == shape_key(a.shape) and pred(v))

    def can_mutate(self, v):
        if not is_float_t(v) or v.overlapping or v.noinplace:
            return False
        r = v.storage.root()
        return not r.frozen and (self.mutates_inputs or not r.input)

    def new_t(self, scope, shape, dtype="float", storage=None, prefix="t", **kw):
        return scope.add(V(self.fresh(prefix), "T", shape=tuple(shape), dtype=dtype,
                           storage=storage or Storage(), **kw))

    def sizes(self, shape):
        if any(d.expr is None for d in shape):
            return None
        return "[" + ", ".join(d.expr for d in shape) + "]"

    def int_expr(self, scope):
        ints = scope.of("int")
        a = self.recent(ints)
        r = self.rng.random()
        if a is None or r < 0.2:
            t = self.recent(scope.of("T"))
            return f"{t.name}.size(0)" if t and t.shape else "n"
        if r < 0.5:
            return a.name
        b = self.choice(ints)
        return self.choice([f"{a.name} + {b.name}", f"{a.name} * {b.name}", f"{a.name} - 1",
                            f"max({a.name}, {b.name})", f"{a.name} // 2", f"{a.name} % 3"])

    def cond(self, scope):
        opts = [lambda: f"n > {self.rng.randint(2, 4)}", lambda: f"m <= {self.rng.randint(2, 4)}",
                lambda: "k > 1", lambda: "n % 2 == 0", lambda: "n != m"]
        fs = self.float_ts(scope, lambda v: v.shape != ())
        if fs:
            opts.append(lambda: f"bool({self.recent(fs).name}.sum() > 0)")
            opts.append(lambda: f"{self.recent(fs).name}.dim() == {self.rng.choice([1, 2])}")
        if scope.of("LT"):
            opts.append(lambda: f"len({self.choice(scope.of('LT')).name}) > 2")
        if scope.of("DT"):
            opts.append(lambda: f'"a" in {self.choice(scope.of("DT")).name}')
        if scope.of("bool"):
            opts.append(lambda: self.choice(scope.of("bool")).name)
        if scope.loop_vars:
            opts.append(lambda: f"{self.choice(scope.loop_vars)} == 1")
        return self.rng.choice(opts)()

    def float_expr(self, scope, a):
        """An expression with a's shape built from a (and maybe a same-shaped b)."""
        b = self.recent(self.same_shape(scope, a)) or a
        ints = scope.of("int")
        flts = scope.of("float")
        opts = [f"torch.relu({a.name})", f"{a.name}.abs()", f"torch.tanh({a.name})",
                f"torch.sigmoid({a.name})", f"-{a.name}", f"{a.name} * 0.5", f"{a.name} + 1.0",
                f"{a.name}.clamp(-1.0, 1.0)", f"{a.name} + {b.name}", f"{a.name} - {b.name}",
                f"{a.name} * {b.name}", f"torch.maximum({a.name}, {b.name})",
                f"torch.where({a.name} > {b.name}, {a.name}, {b.name})",
                f"torch.add({a.name}, {b.name}, alpha=2)", f"{a.name} * 0.5 + {b.name}"]
        if ints:
            opts.append(f"{a.name} * {self.choice(ints).name}")
        if flts:
            opts.append(f"{a.name} + {self.choice(flts).name}")
        return self.rng.choice(opts)

    # --- statements --------------------------------------------------------------
    def block(self, scope, n):
        out = []
        tries = 0
        while len(out) < n and tries < 20 * n:
            tries += 1
            s = self.statement(scope)
            if s:
                out.extend(s if isinstance(s, list) else [s])
        return out

    def statement(self, scope):
        fam_templates = TEMPLATES[self.family]
        if self.rng.random() < 0.65:
            name = self.rng.choice(fam_templates)
        else:
            name = self.rng.choice(ALL_TEMPLATES)
        if name in COMPOUND and scope.depth >= self.max_depth:
            return None
        return getattr(self, "t_" + name)(scope)

    # general
    def t_unary(self, scope):
        a = self.recent(self.float_ts(scope))
        if a is None:
            return None
        e = self.float_expr(scope, a)  # before v exists: v must not appear in its own definition
        v = self.new_t(scope, a.shape)
        return Line(f"{v.name} = {e}")

    # views family
    def t_view(self, scope):
        a = self.recent(self.float_ts(scope, lambda v: len(v.shape) >= 1))
        if a is None:
            return None
        sh, opts = a.shape, []
        view = dict(storage=a.storage, overlapping=a.overlapping)
        if len(sh) == 2:
            for e in (f"{a.name}.transpose(0, 1)", f"{a.name}.t()", f"{a.name}.permute(1, 0)"):
                opts.append((e, (sh[1], sh[0]), view))
            if sh[1].min() >= 2:
                opts.append((f"{a.name}[:, 1:]", (sh[0], sh[1].minus(1)), view))
                opts.append((f"{a.name}.select(1, 1)", (sh[0],), view))
                opts.append((f"{a.name}.narrow(1, 0, 2)", (sh[0], const(2)), view))
            opts.append((f"{a.name}[:, 0]", (sh[0],), view))
            if not a.overlapping:
                opts.append((f"{a.name}.unsqueeze(0).expand(2, -1, -1)", (const(2),) + sh,
                             dict(storage=a.storage, overlapping=True)))
            if sh[0].vals == (1, 1):
                opts.append((f"{a.name}.squeeze(0)", sh[1:], view))
        if len(sh) == 1 and sh[0].expr is not None:
            opts.append((f"{a.name}.expand(n, {sh[0].expr})", (Dim("n", self.N), sh[0]),
                         dict(storage=a.storage, overlapping=True)))
            opts.append((f"{a.name}.unsqueeze(1)", (sh[0], const(1)), view))
            opts.append((f"{a.name}.unsqueeze(0)", (const(1), sh[0]), view))
        if sh[0].min() >= 2:
            opts.append((f"{a.name}[1:]", (sh[0].minus(1),) + sh[1:], view))
            opts.append((f"{a.name}[:2]", (const(2),) + sh[1:], view))
            opts.append((f"{a.name}.narrow(0, 0, 2)", (const(2),) + sh[1:], view))
            opts.append((f"{a.name}[-1]", sh[1:], view))
            opts.append((f"{a.name}[0]", sh[1:], view))
        opts.append((f"{a.name}.detach()", sh, view))
        if len(sh) == 2 and a.contig:
            numel = sh[0].times(sh[1])
            opts.append((f"{a.name}.view(-1)", (numel,), view))
        if len(sh) == 2:
            # reshape/flatten/contiguous may return a view or a copy: freeze the class.
            for e, nsh in ((f"{a.name}.reshape(-1)", (sh[0].times(sh[1]),)),
                           (f"{a.name}.flatten()", (sh[0].times(sh[1]),)),
                           (f"{a.name}.contiguous()", sh),
                           (f"{a.name}.reshape({sh[1].expr}, {sh[0].expr})", (sh[1], sh[0]))):
                if "None" not in e:
                    opts.append((e, nsh, dict(storage=a.storage, overlapping=a.overlapping, freeze=True)))
        if len(sh) == 1 and sh[0].expr is not None and sh[0].vals == tuple(
                n * m for n, m in zip(self.N, self.M)) and a.contig:
            opts.append((f"{a.name}.view(n, m)", (Dim("n", self.N), Dim("m", self.M)), view))
        e, nsh, kw = self.rng.choice(opts)
        kw = dict(kw)
        if kw.pop("freeze", False):
            a.storage.root().frozen = True
        contig = a.contig and (".t()" not in e and "transpose" not in e and
                                                  "permute" not in e and "[:, " not in e and
                                                  "select(1" not in e and "narrow(1" not in e and
                                                  "expand" not in e)
        v = self.new_t(scope, nsh, prefix="v", contig=contig, **kw)
        return Line(f"{v.name} = {e}")

    def t_reduce(self, scope):
        a = self.recent(self.float_ts(scope, lambda v: len(v.shape) >= 1))
        if a is None:
            return None
        d = self.rng.randrange(len(a.shape))
        op = self.rng.choice(["sum", "mean", "amax"])
        if self.rng.random() < 0.25:
            v = self.new_t(scope, (), contig=True)
            return Line(f"{v.name} = {a.name}.{op}()" if op != "amax" else f"{v.name} = {a.name}.max()")
        v = self.new_t(scope, a.shape[:d] + a.shape[d + 1:], contig=True)
        return Line(f"{v.name} = {a.name}.{op}({d})")

    def t_broadcast(self, scope):
        cands = []
        for a in self.float_ts(scope, lambda v: len(v.shape) == 2):
            s0, s1 = shape_key(a.shape)
            for b in self.float_ts(scope):
                k = shape_key(b.shape)
                if k in ((), (s1,), ((1, 1), s1), (s0, (1, 1))):
                    cands.append((a, b))
        if not cands:
            return None
        a, b = self.rng.choice(cands)
        v = self.new_t(scope, a.shape)
        op = self.rng.choice(["+", "*", "-"])
        return Line(f"{v.name} = {a.name} {op} {b.name}" if self.rng.random() < 0.5
                    else f"{v.name} = {b.name} {op} {a.name}")

    def t_matmul(self, scope):
        a = self.recent(self.float_ts(scope, lambda v: len(v.shape) == 2))
        if a is None:
            return None
        bs = self.float_ts(scope, lambda v: len(v.shape) == 2 and v.shape[1].vals == a.shape[1].vals)
        b = self.choice(bs)
        v = self.new_t(scope, (a.shape[0], b.shape[0]), contig=True)
        return Line(f"{v.name} = torch.matmul({a.name}, {b.name}.transpose(0, 1))")

    # containers family
    def t_list_make(self, scope):
        a = self.recent(self.float_ts(scope))
        if a is None:
            return None
        elems = [a] + [self.choice(self.same_shape(scope, a)) for _ in range(self.rng.randint(0, 2))]
        st = union(*[e.storage for e in elems])
        v = scope.add(V(self.fresh("l"), "LT", box=Box(scope.depth, a.shape, st, len(elems))))
        return Line(f"{v.name}: List[torch.Tensor] = [{', '.join(e.name for e in elems)}]")

    def t_list_append(self, scope):
        l = self.recent(scope.of("LT"))
        if l is None:
            return None
        a = self.choice(self.float_ts(scope, lambda v: shape_key(v.shape) == shape_key(l.box.shape)))
        if a is None:
            return None
        union(l.box.storage, a.storage)
        if l.box.depth == scope.depth:
            l.box.min_len += 1
        return Line(f"{l.name}.append({a.name})")

    def t_list_get(self, scope):
        l = self.recent(scope.of("LT", lambda v: v.box.min_len > 0))
        if l is None:
            return None
        i = self.rng.choice(list(range(l.box.min_len)) + [-1])
        v = self.new_t(scope, l.box.shape, storage=l.box.storage)
        return Line(f"{v.name} = {l.name}[{i}]")

    def t_list_len(self, scope):
        l = self.recent(scope.of("LT") + scope.of("LI") + scope.of("DT"))
        if l is None:
            return None
        v = scope.add(V(self.fresh("i"), "int"))
        return Line(f"{v.name} = len({l.name})")

    def t_list_cat(self, scope):
        l = self.recent(scope.of("LT", lambda v: v.box.min_len > 0 and len(v.box.shape) >= 1))
        if l is None:
            return None
        d = self.rng.randrange(len(l.box.shape))
        fn = self.rng.choice(["cat", "stack"])
        if fn == "cat":
            # The length may depend on a loop's trip count: the dim has no known size then.
            shape = l.box.shape[:d] + (unknown_dim(),) + l.box.shape[d + 1:]
        else:
            shape = l.box.shape[:d] + (unknown_dim(),) + l.box.shape[d:]
        v = self.new_t(scope, shape, contig=True)
        return Line(f"{v.name} = torch.{fn}({l.name}, {d})")

    def t_list_set(self, scope):
        l = self.recent(scope.of("LT", lambda v: v.box.min_len > 0))
        if l is None:
            return None
        a = self.choice(self.float_ts(scope, lambda v: shape_key(v.shape) == shape_key(l.box.shape)))
        union(l.box.storage, a.storage)
        return Line(f"{l.name}[{self.rng.randrange(l.box.min_len)}] = {a.name}")

    def t_list_alias(self, scope):
        l = self.recent(scope.of("LT"))
        if l is None:
            return None
        if self.rng.random() < 0.5:  # an alias: appends through it show in l too
            v = scope.add(V(self.fresh("l"), "LT", box=l.box))
            return Line(f"{v.name} = {l.name}")
        box = Box(scope.depth, l.box.shape, Storage(), l.box.min_len)
        v = scope.add(V(self.fresh("l"), "LT", box=box))
        return Line(f"{v.name} = [torch.tanh(e) * 0.5 for e in {l.name}]")

    def t_list_loop(self, scope):
        l = self.recent(scope.of("LT"))
        if l is None:
            return None
        acc = self.new_t(scope, l.box.shape)
        z = self.sizes(l.box.shape)
        if z is None:
            return None
        e = self.fresh("e")
        if self.rng.random() < 0.5:
            body = [Line(f"{acc.name} = {acc.name} + {e}")]
            head = f"for {e} in {l.name}:"
        else:
            j = self.fresh("j")
            body = [Line(f"{acc.name} = {acc.name} + {e} * {j}")]
            head = f"for {j}, {e} in enumerate({l.name}):"
        return [Line(f"{acc.name} = torch.zeros({z})"), Compound([(head, body)])]

    def t_int_list(self, scope):
        if scope.of("LI") and self.rng.random() < 0.6:
            l = self.recent(scope.of("LI"))
            r = self.rng.random()
            if r < 0.4:
                if l.box.depth == scope.depth:
                    l.box.min_len += 1
                return Line(f"{l.name}.append({self.int_expr(scope)})")
            if r < 0.7 and l.box.min_len:
                v = scope.add(V(self.fresh("i"), "int"))
                return Line(f"{v.name} = {l.name}[{self.rng.randrange(l.box.min_len)}]")
            v = self.new_t(scope, (unknown_dim(),), dtype="long")
            return Line(f"{v.name} = torch.tensor({l.name})")
        items = [self.int_expr(scope) for _ in range(self.rng.randint(1, 3))]
        v = scope.add(V(self.fresh("il"), "LI", box=Box(scope.depth, min_len=len(items))))
        return Line(f"{v.name}: List[int] = [{', '.join(items)}]")

    def t_dict_make(self, scope):
        a = self.recent(self.float_ts(scope))
        if a is None:
            return None
        keys = self.rng.sample(["a", "b", "c"], self.rng.randint(1, 2))
        vals = [self.choice(self.same_shape(scope, a)) for _ in keys]
        st = union(*[e.storage for e in vals])
        v = scope.add(V(self.fresh("d"), "DT", box=Box(scope.depth, a.shape, st, keys=keys)))
        return Line(f"{v.name}: Dict[str, torch.Tensor] = {{{', '.join(f'{k!r}: {e.name}' for k, e in zip(keys, vals))}}}")

    def t_dict_set(self, scope):
        d = self.recent(scope.of("DT"))
        if d is None:
            return None
        a = self.choice(self.float_ts(scope, lambda v: shape_key(v.shape) == shape_key(d.box.shape)))
        key = self.rng.choice(["a", "b", "c", "d"])
        union(d.box.storage, a.storage)
        if d.box.depth == scope.depth and key not in d.box.keys:
            d.box.keys.append(key)
        return Line(f"{d.name}[{key!r}] = {a.name}")

    def t_dict_get(self, scope):
        d = self.recent(scope.of("DT", lambda v: v.box.keys))
        if d is None:
            return None
        v = self.new_t(scope, d.box.shape, storage=d.box.storage)
        return Line(f"{v.name} = {d.name}[{self.rng.choice(d.box.keys)!r}]")

    def t_dict_loop(self, scope):
        d = self.recent(scope.of("DT"))
        if d is None or self.sizes(d.box.shape) is None:
            return None
        acc = self.new_t(scope, d.box.shape)
        kk = self.fresh("key")
        if self.rng.random() < 0.5:
            head, body = f"for {kk} in {d.name}.keys():", [Line(f"{acc.name} = {acc.name} + {d.name}[{kk}]")]
        else:
            vv = self.fresh("val")
            head, body = f"for {kk}, {vv} in {d.name}.items():", [Line(f"{acc.name} = {acc.name} * 0.5 + {vv}")]
        return [Line(f"{acc.name} = torch.zeros({self.sizes(d.box.shape)})"), Compound([(head, body)])]

    def t_dict_int(self, scope):
        keys = self.rng.sample(["n", "m", "k"], 2)
        v = scope.add(V(self.fresh("di"), "DI", box=Box(scope.depth, keys=keys)))
        lines = [Line(f"{v.name}: Dict[str, int] = {{{', '.join(f'{k!r}: {k}' for k in keys)}}}")]
        if self.rng.random() < 0.5:
            lines.append(Line(f"{v.name}['z'] = {self.int_expr(scope)}"))
        i = scope.add(V(self.fresh("i"), "int"))
        lines.append(Line(f"{i.name} = {v.name}[{self.rng.choice(keys)!r}]"))
        return lines

    def t_tuple_make(self, scope):
        elems = []
        for _ in range(self.rng.randint(2, 3)):
            pool = self.float_ts(scope) + scope.of("int") + scope.of("str")
            elems.append(self.recent(pool))
        if self.rng.random() < 0.4:
            elems[1] = elems[0]
        v = scope.add(V(self.fresh("tu"), "TUP", elems=[e.copy() for e in elems]))
        return Line(f"{v.name} = ({', '.join(e.name for e in elems)})")

    def t_tuple_use(self, scope):
        t = self.recent(scope.of("TUP"))
        if t is None:
            return None
        if self.rng.random() < 0.5:
            i = self.rng.randrange(len(t.elems))
            v = scope.add(t.elems[i].copy(name=self.fresh("g")))
            return Line(f"{v.name} = {t.name}[{i}]")
        names = [scope.add(e.copy(name=self.fresh("u"))).name for e in t.elems]
        return Line(f"{', '.join(names)} = {t.name}")

    # control-flow family: branches and loops that return or carry one value several times
    def carried(self, scope, allow_fresh=True):
        """Float tensors of one shape that a branch or loop assigns (existing or fresh)."""
        a = self.recent(self.float_ts(scope))
        if a is None:
            return None, []
        same = self.same_shape(scope, a)
        k = self.rng.randint(1, 3)
        out = []
        for _ in range(k):
            if allow_fresh and self.rng.random() < 0.4:
                out.append(V(self.fresh("r"), "T", shape=a.shape, storage=Storage(), fresh=True))
            else:
                c = self.choice(same)
                if all(c.name != o.name for o in out):
                    out.append(c)
        return a, out

    def branch_body(self, scope, targets, a):
        """Inner statements, then assignments to targets -- often one value to several."""
        inner = scope.child()
        body = self.block(inner, self.rng.randint(0, 2))
        same = self.same_shape(inner, a)
        mode = self.rng.random()
        assigned = []
        if mode < 0.45:  # one new value to every target
            e = self.float_expr(inner, self.choice(same))
            tmp = self.new_t(inner, a.shape, prefix="w")
            body.append(Line(f"{tmp.name} = {e}"))
            vals = [tmp] * len(targets)
        elif mode < 0.7:  # one existing value to every target
            vals = [self.choice(same)] * len(targets)
        else:
            vals = [self.choice(same) for _ in targets]
        for t, v in zip(targets, vals):
            body.append(Line(f"{t.name} = {v.name}"))
            assigned.append(v)
        return body, assigned

    def t_if(self, scope):
        a, targets = self.carried(scope)
        if not targets:
            return None
        n_parts = self.rng.choice([1, 2, 2, 3])
        need_else = any(getattr(t, "fresh", False) for t in targets)
        if n_parts == 1 and need_else:
            n_parts = 2
        parts, assigned = [], []
        for p in range(n_parts):
            if p == 0:
                head = f"if {self.cond(scope)}:"
            elif p == n_parts - 1 and (need_else or self.rng.random() < 0.7):
                head = "else:"
            else:
                head = f"elif {self.cond(scope)}:"
            body, vals = self.branch_body(scope, targets, a)
            parts.append((head, body))
            assigned += vals
        if parts[-1][0] != "else:" and need_else:
            body, vals = self.branch_body(scope, targets, a)
            parts.append(("else:", body))
            assigned += vals
        st = union(*([t.storage for t in targets] + [v.storage for v in assigned]))
        for t in targets:
            scope.add(V(t.name, "T", shape=a.shape, storage=st,
                        overlapping=any(v.overlapping for v in assigned) or t.overlapping))
        return Compound(parts)

    def t_if_tuple(self, scope):
        a = self.recent(self.float_ts(scope))
        if a is None:
            return None
        same = self.same_shape(scope, a)
        r = self.fresh("r")
        b = self.choice(same)
        c1 = self.cond(scope)
        parts = [(f"if {c1}:", [Line(f"{r} = ({a.name}, {a.name})")]),
                 ("else:", [Line(f"{r} = ({a.name}, {b.name})")])]
        if self.rng.random() < 0.3:  # nested: the inner If returns the pair twice as well
            inner = [(f"if {self.cond(scope)}:", [Line(f"{r} = ({b.name}, {b.name})")]),
                     ("else:", [Line(f"{r} = ({a.name}, {a.name})")])]
            parts[1] = ("else:", [Compound(inner)])
        st = union(a.storage, b.storage)
        el = V("_", "T", shape=a.shape, storage=st, overlapping=a.overlapping or b.overlapping)
        scope.add(V(r, "TUP", elems=[el.copy(), el.copy()]))
        return Compound(parts)

    def loop_header(self, scope):
        i = self.fresh("i")
        bound = self.rng.choice(["k", "n", "2", "m - 1"])
        return i, bound

    def loop_updates(self, inner, targets, a, i):
        """The loop body's tail: new values for the carried targets, often one value twice."""
        lines = []
        p = targets[0]
        q = targets[-1]
        mode = self.rng.random()
        tmp = self.new_t(inner, a.shape, prefix="w")
        e = self.rng.choice([f"{p.name} * 0.5 + {q.name}", f"torch.tanh({p.name} + {q.name})",
                             f"{p.name} + {i}", f"({p.name} * {q.name}).clamp(-2.0, 2.0)"])
        lines.append(Line(f"{tmp.name} = {e}"))
        if mode < 0.55:
            lines += [Line(f"{t.name} = {tmp.name}") for t in targets]
        elif mode < 0.75 and len(targets) >= 2:
            lines.append(Line(f"{p.name}, {q.name} = {q.name}, {p.name}"))
        else:
            lines.append(Line(f"{p.name} = {tmp.name}"))
        return lines, tmp

    def t_for(self, scope):
        return self._carrying_loop(scope, is_while=False)

    def t_while(self, scope):
        return self._carrying_loop(scope, is_while=True)

    def _carrying_loop(self, scope, is_while):
        """A for or while loop whose body assigns one new value to several carried
        variables; a for loop may also continue/break on its second trip."""
        a, targets = self.carried(scope, allow_fresh=False)
        if not targets:
            return None
        i, bound = self.loop_header(scope)
        inner = scope.child()
        inner.loop_vars.append(i)
        inner.add(V(i, "int"))
        for t in targets:
            inner.add(t.copy(noinplace=True))
        body = []
        if not is_while and self.rng.random() < 0.2:
            body.append(Compound([(f"if {i} == 1:", [Line(self.rng.choice(["continue", "break"]))])]))
        body += self.block(inner, self.rng.randint(0, 2))
        upd, tmp = self.loop_updates(inner, targets, a, i)
        body += upd
        if is_while:
            body.append(Line(f"{i} += 1", keep=True))
        st = union(*([t.storage for t in targets] + [tmp.storage]))
        for t in targets:
            scope.add(V(t.name, "T", shape=a.shape, storage=st, overlapping=any(x.overlapping for x in targets)))
        if is_while:
            return [Line(f"{i} = 0"), Compound([(f"while {i} < {bound}:", body)])]
        return Compound([(f"for {i} in range({bound}):", body)])

    def t_loop_tuple(self, scope):
        """A loop that carries a tuple holding one tensor twice: (x, x)."""
        a = self.recent(self.float_ts(scope))
        if a is None:
            return None
        r, w, i = self.fresh("r"), self.fresh("w"), self.fresh("i")
        body = [Line(f"{w} = {r}[0] * 0.5 + {r}[1]"), Line(f"{r} = ({w}, {w})")]
        el = V("_", "T", shape=a.shape, storage=union(a.storage, Storage()), overlapping=a.overlapping)
        scope.add(V(r, "TUP", elems=[el.copy(), el.copy()]))
        return [Line(f"{r} = ({a.name}, {a.name})"),
                Compound([(f"for {i} in range({self.rng.choice(['k', 'n', '2'])}):", body)])]

    def t_loop_append(self, scope):
        l = self.recent(scope.of("LT"))
        if l is None:
            return None
        a = self.choice(self.float_ts(scope, lambda v: shape_key(v.shape) == shape_key(l.box.shape)))
        i = self.fresh("i")
        union(l.box.storage)  # the appended values are new tensors
        return Compound([(f"for {i} in range({self.rng.choice(['k', 'n'])}):",
                          [Line(f"{l.name}.append({a.name} * {i})")])])

    # inplace family
    def t_clone_inplace(self, scope):
        a = self.recent(self.float_ts(scope, lambda v: v.shape != ()))
        if a is None:
            return None
        c = self.new_t(scope, a.shape, prefix="c")
        lines = [Line(f"{c.name} = {a.name}.clone()")]
        for _ in range(self.rng.randint(1, 3)):
            lines.append(self.inplace_on(scope, c))
        return lines

    def inplace_on(self, scope, c, expr=None):
        expr = expr or c.name
        others = self.float_ts(scope, lambda v: shape_key(v.shape) == shape_key(c.shape)
                               and v.storage.root() is not c.storage.root())
        opts = [f"{expr}.mul_(0.5)", f"{expr}.relu_()", f"{expr}.add_(1.0)", f"{expr}.sub_(0.25)",
                f"{expr}.clamp_(-1.0, 1.0)", f"{expr}.neg_()", f"{expr}.tanh_()", f"{expr}.zero_()",
                f"{expr}.fill_(2.0)"]
        if others:
            b = self.choice(others)
            opts += [f"{expr}.add_({b.name})", f"{expr}.mul_({b.name})", f"{expr}.copy_({b.name})",
                     f"{expr}.add_({b.name}, alpha=-1)"]
        return Line(self.rng.choice(opts))

    def t_inplace(self, scope):
        a = self.recent([v for v in self.float_ts(scope) if self.can_mutate(v)])
        if a is None:
            return None
        return self.inplace_on(scope, a)

    def t_inplace_view(self, scope):
        a = self.recent([v for v in self.float_ts(scope, lambda v: len(v.shape) == 2) if self.can_mutate(v)])
        if a is None:
            return None
        opts = [(f"{a.name}[0]", a.shape[1:]), (f"{a.name}[:, 0]", a.shape[:1]),
                (f"{a.name}.t()", (a.shape[1], a.shape[0])), (f"{a.name}.narrow(1, 0, 1)", (a.shape[0], const(1)))]
        if a.shape[0].min() >= 2:
            opts.append((f"{a.name}[1:]", (a.shape[0].minus(1), a.shape[1])))
        expr, sh = self.rng.choice(opts)
        view = V("_", "T", shape=sh, storage=a.storage)
        if self.rng.random() < 0.5:  # name the view, then mutate through the name
            v = self.new_t(scope, sh, storage=a.storage, prefix="v", contig=False)
            return [Line(f"{v.name} = {expr}"), self.inplace_on(scope, v)]
        return self.inplace_on(scope, view, expr)

    def t_index_assign(self, scope):
        a = self.recent([v for v in self.float_ts(scope, lambda v: len(v.shape) == 2) if self.can_mutate(v)])
        if a is None:
            return None
        srcs = self.float_ts(scope, lambda v: shape_key(v.shape) == shape_key(a.shape[1:])
                             and v.storage.root() is not a.storage.root())
        if srcs and self.rng.random() < 0.6:
            return Line(f"{a.name}[0] = {self.choice(srcs).name}")
        return Line(f"{a.name}[:, 0] = {self.rng.choice(['1.5', '0.0', '-2.0'])}")

    def t_alias_inplace(self, scope):
        a = self.recent([v for v in self.float_ts(scope) if self.can_mutate(v)])
        if a is None:
            return None
        u = scope.add(a.copy(name=self.fresh("u")))
        return [Line(f"{u.name} = {a.name}"), self.inplace_on(scope, u)]

    def t_input_inplace(self, scope):
        if not self.mutates_inputs:
            return None
        a = self.choice([v for v in scope.of("T", lambda v: v.name in ("x", "y")) if self.can_mutate(v)])
        if a is None:
            return None
        if self.rng.random() < 0.4:
            return self.inplace_on(scope, V("_", "T", shape=a.shape[1:], storage=a.storage), f"{a.name}[0]")
        return self.inplace_on(scope, a)

    # vararg family: print and str.format with several arguments of mixed types
    def vararg(self, scope, allow_tensor):
        ts = self.float_ts(scope, lambda v: len(v.shape) >= 1)
        t = self.recent(ts)
        ints, strs = scope.of("int"), scope.of("str")
        flts = scope.of("float", lambda v: v.exact)
        opts = [lambda: self.rng.choice(['"n is"', '"shape"', '"end"', '"x="', '""', '"a b"', '"{}"']),
                lambda: f"{self.int_expr(scope)} * {self.rng.choice(INT_FACTORS)}",
                lambda: "x.shape", lambda: "x.dim()", lambda: "n / 2", lambda: "1.5",
                lambda: "n > 2", lambda: "x.size(0)"]
        if t:
            opts += [lambda: f"{t.name}.size()", lambda: f"{t.name}.dim()", lambda: f"{t.name}.shape",
                     lambda: f"{t.name}.numel()"]
        if ints:
            opts.append(lambda: self.choice(ints).name)
        if strs:
            opts += [lambda: self.choice(strs).name] * 2
        if flts:
            opts.append(lambda: self.choice(flts).name)
        if scope.of("LI"):
            opts.append(lambda: self.choice(scope.of("LI")).name)
        if allow_tensor:  # tensors whose printed form is exact
            opts.append(lambda: "torch.ones(2) * n")
        return self.rng.choice(opts)()

    def t_print(self, scope):
        args = [self.vararg(scope, allow_tensor=True) for _ in range(self.rng.randint(1, 5))]
        if self.rng.random() < 0.3:  # a string as the last argument
            args.append(self.rng.choice(['"end"', '"!"', '"items"']))
        return Line(f"print({', '.join(args)})")

    def t_format(self, scope):
        args = [self.vararg(scope, allow_tensor=False) for _ in range(self.rng.randint(1, 4))]
        v = scope.add(V(self.fresh("s"), "str"))
        fmt = self.rng.choice([" ", ", ", ":", "|"]).join("{}" for _ in args)
        if self.rng.random() < 0.4:
            fmt = "<" + fmt + ">"
        if self.rng.random() < 0.3 and all(a.replace("_", "").replace(".", "").isalnum() for a in args):
            return Line(f'{v.name} = f"{fmt.replace("{}", "{{{}}}").format(*args)}"')
        return Line(f'{v.name} = "{fmt}".format({", ".join(args)})')

    def t_str_ops(self, scope):
        s = self.recent(scope.of("str"))
        r = self.rng.random()
        if s is None or r < 0.3:
            v = scope.add(V(self.fresh("s"), "str"))
            return Line(f"{v.name} = str({self.int_expr(scope)})")
        if r < 0.7:
            v = scope.add(V(self.fresh("s"), "str"))
            return Line(f'{v.name} = {s.name} + "{self.rng.choice(["!", "-x", ""])}"')
        v = scope.add(V(self.fresh("i"), "int"))
        return Line(f"{v.name} = len({s.name})")

    # scalars family: arithmetic on sizes
    def t_int_expr(self, scope):
        t = self.recent(self.float_ts(scope, lambda v: len(v.shape) >= 1))
        opts = [lambda: self.int_expr(scope), lambda: f"x.size(0) * {self.rng.choice(INT_FACTORS)}",
                lambda: "n * m + k", lambda: "abs(n - m)", lambda: "min(n, k)", lambda: "x.numel() // 2"]
        if t:
            opts += [lambda: f"{t.name}.size(0) * k", lambda: f"{t.name}.dim()", lambda: f"{t.name}.numel()"]
        e = self.rng.choice(opts)()
        v = scope.add(V(self.fresh("i"), "int"))
        return Line(f"{v.name} = {e}")

    def t_float_expr(self, scope):
        ints = scope.of("int")
        i = self.choice(ints).name if ints else "n"
        e = self.rng.choice([f"{i} / 2", f"float({i}) * 0.25", f"{i} / m + 1.5", f"float(n) - 0.5"])
        t = self.recent(self.float_ts(scope))
        exact = True
        if t is not None and self.rng.random() < 0.25:
            e, exact = f"float({t.name}.sum())", False
        v = scope.add(V(self.fresh("f"), "float", exact=exact))
        return Line(f"{v.name} = {e}")

    def t_bool_expr(self, scope):
        v = scope.add(V(self.fresh("b"), "bool"))
        return Line(f"{v.name} = {self.rng.choice(['n > m', 'n == m', 'k >= 2', 'n % 2 == 1'])}")

    def t_tensor_from_scalars(self, scope):
        ints = scope.of("int")
        i = self.choice(ints).name if ints else "k"
        flts = scope.of("float")
        f = self.choice(flts).name if flts else "0.5"
        N, M = Dim("n", self.N), Dim("m", self.M)
        opts = [(f"torch.zeros(n, m) + {i}", (N, M), "float"), (f"torch.full([n, m], {f})", (N, M), "float"),
                (f"torch.ones(m) * {i}", (M,), "float"), (f"torch.arange(n).to(torch.float32) * {f}", (N,), "float"),
                (f"torch.arange(n * m).view(n, m)", (N, M), "long"), ("(x > 0).sum(0)", (M,), "long"),
                ("x > y", (N, M), "bool")]
        t = self.recent(self.float_ts(scope, lambda v: v.shape != ()))
        if t:
            opts.append((f"torch.ones_like({t.name}) * {i}", t.shape, "float"))
            opts.append((f"{t.name} * {f} + {i}", t.shape, "float"))
        e, sh, dt = self.rng.choice(opts)
        v = self.new_t(scope, sh, dtype=dt, contig="like" not in e and "* {f} +" not in e)
        return Line(f"{v.name} = {e}")


    # pointwise family: chains of elementwise ops (what ops_cpu.fuse_pointwise groups), with
    # broadcasting (a row x[0], a 0-dim x[0, 0], a column that the fused loop does not
    # take), type promotion (python scalars, bool masks, long and double operands), in-place
    # ops on fresh intermediates, and every step named so intermediates can be returned.
    def pw_operand(self, scope, cur):
        """(expression, shape, dtype) of a second operand for `cur` (2-d float)."""
        b = self.recent(self.same_shape(scope, cur)) or cur
        N, M = cur.shape
        opts = [(b.name, cur.shape, "float")] * 4 + [
            (f"{b.name}[0]", cur.shape, "float"),            # trailing-dimension vector
            (f"{b.name}[0, 0]", cur.shape, "float"),         # 0-dim tensor
            (f"{b.name}[:, 0:1]", cur.shape, "float"),       # column: not the fused loop's case
            (self.rng.choice(["0.5", "2.0", "-1.25", "3"]), cur.shape, "float"),
            ("k", cur.shape, "float"),
            ("torch.arange(m)", cur.shape, "float"),         # long row: promoted
            (f"{b.name}.double()", cur.shape, "double"),     # double: promoted
        ]
        return self.rng.choice(opts)

    def t_pw_chain(self, scope):
        cur = self.recent(self.float_ts(scope, lambda v: len(v.shape) == 2 and v.dtype == "float"))
        if cur is None:
            return None
        lines = []
        for _ in range(self.rng.randint(2, 6)):
            r = self.rng.random()
            dtype = "float"
            if r < 0.45:
                other, _, dtype = self.pw_operand(scope, cur)
                op = self.rng.choice(["+", "-", "*", "/"])
                e = self.rng.choice([f"{cur.name} {op} {other}", f"{other} {op} {cur.name}"])
                if self.rng.random() < 0.2:
                    e = f"torch.add({cur.name}, {other}, alpha={self.rng.choice(['1', '2', '0.5'])})"
            elif r < 0.75:
                e = self.rng.choice([
                    f"torch.relu({cur.name})", f"{cur.name}.abs()", f"torch.tanh({cur.name})",
                    f"torch.sigmoid({cur.name})", f"-{cur.name}", f"torch.exp({cur.name}.clamp(-10.0, 10.0))",
                    f"torch.sqrt({cur.name}.abs())", f"torch.reciprocal({cur.name}.abs() + 1.0)",
                    f"torch.clamp({cur.name}, -1.0, 1.5)", f"torch.clamp_min({cur.name}, 0.25)",
                    f"torch.clamp_max({cur.name}, 0.5)", f"torch.nn.functional.relu6({cur.name} * 4.0)",
                    f"torch.nn.functional.hardtanh({cur.name}, -0.5, 0.5)",
                    f"torch.nn.functional.silu({cur.name})",
                    f'torch.nn.functional.gelu({cur.name}, approximate="tanh")',
                    f"torch.nn.functional.gelu({cur.name})",
                    f"torch.nn.functional.hardswish({cur.name})", f"torch.nn.functional.hardsigmoid({cur.name})",
                    f"torch.nn.functional.leaky_relu({cur.name}, 0.1)", f"torch.rsub({cur.name}, 1.0)",
                    # issue 24: erf, log, rsqrt, pow with the exponents fused exactly (and
                    # one that is not: 1.5 stays ATen's), layer norm's decomposed tail
                    f"torch.erf({cur.name})", f"torch.log({cur.name}.abs() + 0.5)", f"torch.log({cur.name})",
                    f"torch.rsqrt({cur.name}.abs() + 0.25)", f"{cur.name} ** 2", f"torch.pow({cur.name}, 3)",
                    f"torch.pow({cur.name}.abs() + 0.5, -2.0)", f"torch.pow({cur.name}.abs() + 0.5, 0.5)",
                    f"torch.pow({cur.name}.abs() + 0.5, -0.5)", f"torch.pow({cur.name}.abs() + 0.5, -1)",
                    f"torch.pow({cur.name}.abs(), 1.5)",
                    f"({cur.name} - {cur.name}[0]) * torch.rsqrt(({cur.name} - {cur.name}[0]).pow(2) + 1e-5)"])
            else:
                other, _, odt = self.pw_operand(scope, cur)
                cmp = self.rng.choice([">", "<", ">=", "<=", "==", "!="])
                mask = self.new_t(scope, cur.shape, dtype="bool", prefix="p")
                lines.append(Line(f"{mask.name} = {cur.name} {cmp} {other}"))
                b = self.recent(self.same_shape(scope, cur)) or cur
                e = self.rng.choice([f"torch.where({mask.name}, {cur.name}, {b.name})",
                                     f"torch.where({mask.name}, {cur.name}, 0.0)",
                                     f"torch.where({mask.name}, -1.0, {b.name})"])
            v = self.new_t(scope, cur.shape, dtype=dtype, prefix="p")
            lines.append(Line(f"{v.name} = {e}"))
            if dtype != "float":
                break
            cur = v
            if self.rng.random() < 0.25 and self.can_mutate(cur):  # in place on a fresh intermediate
                other, _, odt = self.pw_operand(scope, cur)
                if odt != "float" or "arange" in other:
                    other = "0.5"
                lines.append(Line(self.rng.choice([f"{cur.name}.add_({other})", f"{cur.name}.mul_({other})",
                                                   f"{cur.name}.relu_()", f"{cur.name}.clamp_(-1.0, 1.0)",
                                                   f"{cur.name}.sigmoid_()"])))
        return lines

# Template names per family (the family's share is 65%; the rest draws from all).
TEMPLATES = {
    "control_flow": ["if", "if", "if_tuple", "for", "while", "loop_tuple", "unary"],
    "views": ["view", "view", "view", "reduce", "broadcast", "matmul", "unary"],
    "containers": ["list_make", "list_append", "list_get", "list_len", "list_cat", "list_set",
                   "list_alias", "list_loop", "int_list", "dict_make", "dict_set", "dict_get",
                   "dict_loop", "dict_int", "tuple_make", "tuple_use", "loop_append"],
    "inplace": ["clone_inplace", "inplace", "inplace_view", "index_assign", "alias_inplace",
                "input_inplace", "view", "unary"],
    "vararg": ["print", "print", "format", "format", "str_ops", "int_expr"],
    "scalars": ["int_expr", "int_expr", "float_expr", "bool_expr", "tensor_from_scalars"],
    "pointwise": ["pw_chain", "pw_chain", "pw_chain", "unary"],
}
ALL_TEMPLATES = sorted({t for ts in TEMPLATES.values() for t in ts})
COMPOUND = {"if", "if_tuple", "for", "while", "loop_tuple", "list_loop", "dict_loop", "loop_append"}


def rng_for(base, index):
    # A string seed: random.Random hashes it with SHA-512, identical on every platform.
    return random.Random(f"brisk-differential:{base}:{index}")


def generate(base, index):
    rng = rng_for(base, index)
    family = FAMILIES[index % len(FAMILIES)]
    n1, m1 = rng.randint(2, 5), rng.randint(2, 5)
    n2, m2 = n1, m1
    while (n2, m2) == (n1, m1):
        n2, m2 = rng.randint(2, 5), rng.randint(2, 5)
    g = Generator(rng, family, ((n1, n2), (m1, m2)))
    N, M = Dim("n", (n1, n2)), Dim("m", (m1, m2))
    scope = Scope({}, 0)
    params = ["x: torch.Tensor", "y: torch.Tensor", "k: int"]
    scope.add(V("x", "T", shape=(N, M), storage=Storage(input=True), contig=True))
    scope.add(V("y", "T", shape=(N, M), storage=Storage(input=True), contig=True))
    scope.add(V("k", "int"))
    extra = []
    if rng.random() < 0.15:
        params.append("xs: List[torch.Tensor]")
        scope.add(V("xs", "LT", box=Box(-1, (N, M), Storage(input=True), 2)))  # depth -1: never grows
        extra.append("xs")
    if rng.random() < 0.1:
        params.append("dd: Dict[str, torch.Tensor]")
        scope.add(V("dd", "DT", box=Box(-1, (N, M), Storage(input=True), keys=["a", "b"])))
        extra.append("dd")
    body = [Line("n = x.size(0)"), Line("m = x.size(1)")]
    scope.add(V("n", "int"))
    scope.add(V("m", "int"))
    body += g.block(scope, rng.randint(4, 10))

    returns = pick_returns(rng, scope, family)
    if rng.random() < (0.3 if family == "control_flow" else 0.1):
        early = early_returns(rng, scope, returns)
        body.append(Compound([(f"if {g.cond(scope)}:", [Line("return (" + ", ".join(early) + ",)")])]))
    p = Program(seed=(base, index), family=family, params=params, body=body, returns=returns,
                mutates_inputs=g.mutates_inputs)
    # `return v` instead of `return (v,)`; not with an early return, which returns a tuple.
    p.bare_return = len(returns) == 1 and rng.random() < 0.5 and not isinstance(body[-1], Compound)
    p.inputs = {"main": dict(n=n1, m=m1, k=rng.randint(1, 3), extra=extra),
                "alt": dict(n=n2, m=m2, k=rng.randint(1, 3), extra=extra)}
    return p


def pick_returns(rng, scope, family):
    pool = [v for v in scope.vars.values() if v.name not in ("k",)]
    w = [1 + i for i in range(len(pool))]  # favour the newest values
    chosen = []
    for _ in range(rng.randint(1, 5)):
        v = rng.choices(pool, weights=w)[0]
        if v.name not in chosen:
            chosen.append(v.name)
    if rng.random() < 0.5:  # one value returned twice
        chosen.insert(rng.randrange(len(chosen) + 1), rng.choice(chosen))
    if rng.random() < 0.25 and "x" not in chosen:  # an input returned as it is
        chosen.append("x")
    return chosen


def early_returns(rng, scope, returns):
    """An early return of the same types, often one value in several places."""
    out = []
    for name in returns:
        v = scope.vars[name]
        same = [u.name for u in scope.vars.values() if u.kind == v.kind and v.kind in ("T", "int", "str")]
        out.append(rng.choice(same) if same and rng.random() < 0.5 else name)
    if len(out) >= 2 and scope.vars[out[0]].kind == scope.vars[out[1]].kind and rng.random() < 0.6:
        out[1] = out[0]
    return out


def make_inputs(program, which):
    """Fresh input values (deterministic in the program's seed) for "main" or "alt"."""
    import torch
    spec = program.inputs[which]
    g = torch.Generator().manual_seed(hash_seed(program.seed, which))
    n, m = spec["n"], spec["m"]
    args = [torch.randn(n, m, generator=g), torch.randn(n, m, generator=g), spec["k"]]
    if "xs" in spec["extra"]:
        args.append([torch.randn(n, m, generator=g) for _ in range(2)])
    if "dd" in spec["extra"]:
        args.append({"a": torch.randn(n, m, generator=g), "b": torch.randn(n, m, generator=g)})
    return args


def hash_seed(seed, which):
    return rng_for(f"{seed[0]}:{which}", seed[1]).getrandbits(62)


if __name__ == "__main__":
    # python3 program_gen.py BASE INDEX: print one program's source.
    prog = generate(int(sys.argv[1]), int(sys.argv[2]))
    print(prog.source())
    print("# inputs:", prog.inputs, "mutates_inputs:", prog.mutates_inputs)
