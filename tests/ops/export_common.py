"""What the PT2 export scripts of tests/ops share: their two flags, the zoo's jit_pickle
(loaded from the path Bazel passes), and writing a program's inputs and ep.module()'s
outputs beside it."""
import argparse
import importlib.util
import os

import torch


def setup():
    """Parses --out DIR and --jit-pickle FILE; returns (out, the jit_pickle module)."""
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--jit-pickle", required=True)
    a = p.parse_args()
    spec = importlib.util.spec_from_file_location("jit_pickle", a.jit_pickle)
    jit_pickle = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(jit_pickle)
    return a.out, jit_pickle


def save_inputs_and_expected(jit_pickle, out, name, ep, args):
    """<name>.inputs.pt (the args, as the zoo writes them) and <name>.expected.pt."""
    jit_pickle.save({"args": list(args), "kwargs": {}}, os.path.join(out, name + ".inputs.pt"))
    with torch.no_grad():
        jit_pickle.save(ep.module()(*args), os.path.join(out, name + ".expected.pt"))
