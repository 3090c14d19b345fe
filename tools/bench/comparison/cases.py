"""What is compared: the zoo models and batch sizes (each with the inputs file it runs on),
and how a case's model and inputs are loaded: the eager module from the zoo's Python
source with the .pt's weights, and for the static int8 rows the fp32 model each PT2E
program was quantized from."""
import collections
import gc
import importlib.util
import os
import sys

import torch

from . import settings

Case = collections.namedtuple("Case", ["model", "batch", "inputs"])

CASES = [
    Case("resnet18", 1, "inputs"),
    Case("resnet18", 8, "b8.inputs"),
    Case("mobilenet_v2", 1, "inputs"),
    Case("mobilenet_v2", 8, "b8.inputs"),
    Case("mlp", 1, "inputs"),
    Case("mlp", 64, "inputs2"),
    Case("deepandwide", 1, "inputs"),
    Case("deepandwide", 32, "inputs2"),
    Case("transformer", 1, "inputs"),
    Case("inception_fork", 1, "inputs"),
    Case("inception_nofork", 1, "inputs"),
    Case("chain_mul100", 1, "inputs"),
    Case("chain_add100", 1, "inputs"),
    Case("lstm_tagger", 1, "inputs"),
    Case("gru_encoder", 1, "inputs"),
]
QUICK_CASES = ["mlp:b1", "chain_add100:b1", "inception_fork:b1"]
# The zoo's PT2E static int8 programs: <model>.int8.pt2 (dynamic batch 1..64).
INT8_STATIC_SUFFIX = ".int8.pt2"


def case_id(c):
    return f"{c.model}:b{c.batch}"


def select_cases(spec, quick):
    """--models: models (every batch of each) or model:bN cases, in the order given."""
    if not spec:
        spec = ",".join(QUICK_CASES) if quick else ""
    if not spec:
        return list(CASES)
    out = []
    for item in [s.strip() for s in spec.split(",") if s.strip()]:
        found = [c for c in CASES if item in (c.model, case_id(c))]
        if not found:
            names = ", ".join(sorted({c.model for c in CASES} | {case_id(c) for c in CASES}))
            raise SystemExit(f"compare: unknown model '{item}' (known: {names})")
        out.extend(c for c in found if c not in out)
    return out


def default_zoo():
    """Under `bazel run` tools/bench sits in the runfiles next to tools/zoo's generated
    files; from the source tree, bazel-bin has them."""
    for d in (os.path.join(settings.BENCH_DIR, "..", "zoo"),
              os.path.join(settings.BENCH_DIR, "..", "..", "bazel-bin", "tools", "zoo")):
        if os.path.exists(os.path.join(d, "mlp.pt")):
            return os.path.abspath(d)
    return os.path.abspath(os.path.join(settings.BENCH_DIR, "..", "zoo"))


def zoo_file(zoo, case, suffix):
    return os.path.join(zoo, f"{case.model}{suffix}")


def load_inputs(zoo, case):
    d = torch.load(zoo_file(zoo, case, f".{case.inputs}.pt"))
    return list(d["args"]), dict(d["kwargs"])


_models_module = None


def zoo_models(zoo):
    """tools/zoo/models.py (the models' Python source), or None."""
    global _models_module
    if _models_module is None:
        path = os.path.join(zoo, "models.py")
        if not os.path.exists(path):
            return None
        spec = importlib.util.spec_from_file_location("brisk_zoo_models", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        _models_module = mod
    return _models_module


def load_eager(zoo, case):
    """(module, where it came from): the model's Python source with the .pt's weights,
    in eval mode without requires_grad; the scripted module where there is no source."""
    path = zoo_file(zoo, case, ".pt")
    models = zoo_models(zoo)
    source = "scripted module, not frozen (no Python source found)"
    module = None
    if models is not None and case.model in models.MODELS:
        module = models.MODELS[case.model]().eager
        try:
            # Same seed, same weights; loading them from the .pt makes sure.
            module.load_state_dict(torch.jit.load(path).state_dict())
            source = "tools/zoo/models.py, weights from the .pt"
        except Exception as e:  # noqa: BLE001 - reported, and the seed gives the same weights
            source = f"tools/zoo/models.py, own seed ({type(e).__name__} loading the .pt's weights)"
    if module is None:
        module = torch.jit.load(path)
    module.eval()
    for p in module.parameters():
        p.requires_grad_(False)
    gc.collect()
    return module, source


# --- Static int8 (--precision int8_static) --------------------------------------------

_zoo_pt2_module = None


def zoo_models_pt2(zoo):
    """tools/zoo/models_pt2.py: the fp32 model each PT2E program was quantized from and
    its calibration inputs. It imports models.py as `models`, from the zoo directory."""
    global _zoo_pt2_module
    if _zoo_pt2_module is None:
        if not os.path.exists(os.path.join(zoo, "models_pt2.py")):
            raise FileNotFoundError(f"no models_pt2.py in {zoo}")
        sys.path.insert(0, zoo)
        import models_pt2
        _zoo_pt2_module = models_pt2
    return _zoo_pt2_module


def int8_program(zoo, case):
    path = zoo_file(zoo, case, INT8_STATIC_SUFFIX)
    if not os.path.exists(path):
        raise FileNotFoundError(f"the zoo has no PT2E int8 program for {case.model} ({os.path.basename(path)})")
    return path


_INT8_FLOAT = {}


def int8_float_model(zoo, case):
    """The fp32 module the zoo's <model>.int8.pt2 was quantized from (the zoo model, for
    mobilenet_v2 with BatchNorm statistics re-estimated), built once per model."""
    int8_program(zoo, case)
    if case.model not in _INT8_FLOAT:
        module = zoo_models_pt2(zoo).int8_float_model(case.model)
        for p in module.parameters():
            p.requires_grad_(False)
        _INT8_FLOAT[case.model] = module
    return _INT8_FLOAT[case.model]


def int8_static_reference(zoo, case, args, kwargs):
    """What the static int8 rows are checked against: the fp32 model their programs were
    quantized from, on the case's inputs."""
    with torch.no_grad():
        return int8_float_model(zoo, case)(*args, **kwargs)
