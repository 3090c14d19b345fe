"""The statement tree of a generated program and its rendering to Python source.

Programs are kept as a tree (not as text) so that the shrinker can delete any single
statement, at any nesting depth, and re-render; a deletion that leaves the program
invalid is simply rejected when TorchScript refuses to compile it.
"""
import copy
from dataclasses import dataclass, field
from typing import List, Tuple

INDENT = "    "


@dataclass
class Line:
    """One simple statement (`v3 = a + b`, `print(...)`, `l.append(t)`). keep: the
    shrinker must not delete it (a while loop's increment: without it the interpreter
    would loop forever in the test process)."""
    text: str
    keep: bool = False

    def render(self, ind):
        return [ind + self.text]


@dataclass
class Compound:
    """if/elif/else, for or while: each part is (header, body). An emptied body renders
    as `pass`, so deleting every statement of a branch still leaves valid syntax."""
    parts: List[Tuple[str, list]]

    def render(self, ind):
        out = []
        for header, body in self.parts:
            out.append(ind + header)
            inner = [l for s in body for l in s.render(ind + INDENT)]
            out.extend(inner or [ind + INDENT + "pass"])
        return out


@dataclass
class Program:
    seed: Tuple[int, int]  # (base seed, case index)
    family: str
    params: List[str]  # "x: torch.Tensor", ...
    body: list  # of Line / Compound
    returns: List[str]  # expressions of the final `return (...)`
    inputs: dict = field(default_factory=dict)  # "main"/"alt": list of input values
    mutates_inputs: bool = False
    bare_return: bool = False  # `return v` rather than `return (v,)` for one value

    def source(self):
        lines = [
            "import torch",
            "from typing import Dict, List, Tuple",
            "",
            "",
            "class Program(torch.nn.Module):",
            f"    # brisk differential program: seed {self.seed}, family {self.family}",
            f"    def forward(self, {', '.join(self.params)}):",
        ]
        for s in self.body:
            lines.extend(s.render(INDENT * 2))
        if self.bare_return and len(self.returns) == 1:
            lines.append(INDENT * 2 + "return " + self.returns[0])
        else:
            lines.append(INDENT * 2 + "return " + _tuple(self.returns))
        return "\n".join(lines) + "\n"

    # --- used by the shrinker --------------------------------------------------
    def statement_paths(self):
        """Every statement's path: (i,) at top level, (i, part, j, ...) inside compounds.
        Outer statements come first, so whole blocks are tried before their insides."""
        paths = []

        def walk(body, prefix):
            for i, s in enumerate(body):
                if not getattr(s, "keep", False):
                    paths.append(prefix + (i,))
            for i, s in enumerate(body):
                if isinstance(s, Compound):
                    for p, (_, inner) in enumerate(s.parts):
                        walk(inner, prefix + (i, p))

        walk(self.body, ())
        return paths

    def without_statement(self, path):
        p = copy.deepcopy(self)
        body = p.body
        for k in range(0, len(path) - 1, 2):
            body = body[path[k]].parts[path[k + 1]][1]
        del body[path[-1]]
        return p

    def without_return(self, i):
        p = copy.deepcopy(self)
        del p.returns[i]
        return p

    def size(self):
        return len(self.statement_paths()) + len(self.returns)


def _tuple(items):
    if len(items) == 1:
        return "(" + items[0] + ",)"
    return "(" + ", ".join(items) + ")"
