"""Sends one JSON and one binary (torch.save) request to a brisk.serve application, prints
the outputs and the answering replica's /stats.

    python examples/ray/client.py --url http://127.0.0.1:8000 \
        --inputs bazel-bin/tools/zoo/mlp.inputs.pt [--check bazel-bin/tools/zoo/mlp.pt]

--inputs: a torch.save file of the model's inputs (a tuple/list of positional arguments, or
the zoo's {"args": [...], "kwargs": {...}}); without it, one random (1, 256) float32 tensor
(the zoo's mlp). --check: a TorchScript file whose result the answers are compared with.
Needs only torch and the standard library (brisk.serve's JSON helpers when PYTHONPATH has
brisk; the encoding is written out here too, it is that small).
"""
import argparse
import io
import json
import sys
import urllib.error
import urllib.request

import torch


def encode(v):
    """A value as brisk.serve's JSON VALUE (examples/ray/README.md, "Body formats")."""
    if isinstance(v, torch.Tensor):
        t = v.detach().cpu()
        data = (t.float() if t.dtype in (torch.float16, torch.bfloat16) else t).reshape(-1).tolist()
        return {"dtype": str(t.dtype).removeprefix("torch."), "shape": list(t.shape), "data": data}
    if isinstance(v, tuple):
        return {"tuple": [encode(x) for x in v]}
    if isinstance(v, list):
        return {"list": [encode(x) for x in v]}
    if isinstance(v, dict):
        return {"dict": [[k, encode(x)] for k, x in v.items()]}
    return {"value": v}


def decode(d):
    if "dtype" in d:
        dtype = getattr(torch, d["dtype"])
        src = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
        return torch.tensor(d["data"], dtype=src).to(dtype).reshape(d["shape"])
    (kind, body), = d.items()
    if kind == "tuple":
        return tuple(decode(x) for x in body)
    if kind == "list":
        return [decode(x) for x in body]
    if kind == "dict":
        return {k: decode(x) for k, x in body}
    return body


def post(url, body, ctype, timeout):
    req = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": ctype})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def show(name, value):
    if isinstance(value, torch.Tensor):
        flat = value.reshape(-1)
        head = ", ".join(f"{x:.5g}" for x in flat[:6].tolist())
        print(f"  {name}: {str(value.dtype).removeprefix('torch.')} {list(value.shape)} "
              f"[{head}{', ...' if flat.numel() > 6 else ''}]")
    elif isinstance(value, (tuple, list)):
        for i, x in enumerate(value):
            show(f"{name}[{i}]", x)
    elif isinstance(value, dict):
        for k, x in value.items():
            show(f"{name}[{k!r}]", x)
    else:
        print(f"  {name}: {value!r}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", default="http://127.0.0.1:8000")
    ap.add_argument("--inputs", help="torch.save file of the inputs (e.g. mlp.inputs.pt)")
    ap.add_argument("--check", help="TorchScript file to compare the answers with")
    ap.add_argument("--timeout", type=float, default=60.0)
    a = ap.parse_args()
    url = a.url.rstrip("/")

    if a.inputs:
        obj = torch.load(a.inputs, weights_only=True)
        if isinstance(obj, dict) and "args" in obj:
            args, kwargs = list(obj["args"]), dict(obj.get("kwargs") or {})
        elif isinstance(obj, (tuple, list)):
            args, kwargs = list(obj), {}
        else:
            args, kwargs = [obj], {}
    else:
        args, kwargs = [torch.randn(1, 256)], {}
    expected = None
    if a.check:
        with torch.no_grad():
            expected = torch.jit.load(a.check).eval()(*args, **kwargs)

    failed = False
    # JSON: {"inputs": [...], "kwargs": {...}} -> {"outputs": [...], "structure": ...}
    req = {"inputs": [encode(x) for x in args]}
    if kwargs:
        req["kwargs"] = {k: encode(x) for k, x in kwargs.items()}
    status, data = post(url + "/", json.dumps(req).encode(), "application/json", a.timeout)
    print(f"JSON request: HTTP {status}")
    if status == 200:
        answer = json.loads(data)
        outs = [decode(x) for x in answer["outputs"]]
        got = {"tuple": tuple(outs), "list": outs}.get(answer["structure"], outs[0])
        show("outputs", got)
        if expected is not None:
            failed |= not _close("JSON", got, expected)
    else:
        print("  ", data.decode(errors="replace"))
        failed = True

    # Binary: torch.save({"args": ..., "kwargs": ...}) -> torch.save(result)
    buf = io.BytesIO()
    torch.save({"args": args, "kwargs": kwargs}, buf)
    status, data = post(url + "/", buf.getvalue(), "application/octet-stream", a.timeout)
    print(f"binary request: HTTP {status}")
    if status == 200:
        got = torch.load(io.BytesIO(data), weights_only=True)
        show("result", got)
        if expected is not None:
            failed |= not _close("binary", got, expected)
    else:
        print("  ", data.decode(errors="replace"))
        failed = True

    with urllib.request.urlopen(url + "/stats", timeout=a.timeout) as r:
        stats = json.loads(r.read())
    print("stats of the replica that answered GET /stats:")
    print(json.dumps(stats, indent=2, sort_keys=True))
    return 1 if failed else 0


def _close(what, got, expected):
    def leaves(v):
        if isinstance(v, torch.Tensor):
            yield v
        elif isinstance(v, (tuple, list)):
            for x in v:
                yield from leaves(x)
        elif isinstance(v, dict):
            for x in v.values():
                yield from leaves(x)
    ok = True
    for g, e in zip(leaves(got), leaves(expected), strict=False):
        scale = max(1.0, e.abs().max().item()) if e.numel() and e.is_floating_point() else 1.0
        if g.shape != e.shape or not torch.allclose(g.double(), e.double(), rtol=1e-4,
                                                    atol=1e-4 * scale):
            ok = False
    print(f"  {what} answer {'matches' if ok else 'DIFFERS FROM'} the TorchScript reference")
    return ok


if __name__ == "__main__":
    sys.exit(main())
