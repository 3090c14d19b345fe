"""brisk on Ray Serve: one brisk Module per replica behind Ray Serve's HTTP proxy.

    # one command, from a config file (examples/ray/serve_config.yaml):
    #   serve run examples/ray/serve_config.yaml      # import_path: brisk.serve:build_app
    # or from Python:
    from ray import serve
    import brisk.serve
    serve.run(brisk.serve.app(model="mlp.pt", max_batch_size=8, num_replicas=2,
                              intra_op_threads=1))   # extra keywords: brisk.load options

Ray is an optional dependency (tools/requirements-serve.txt, `ray[serve]`): importing brisk
or brisk.serve never imports Ray or starlette. They are imported inside app()/build_app()
(deploy time) and by the replicas, which Ray itself starts.

HTTP (examples/ray/README.md describes every field):
  POST /       Content-Type: application/json
               {"inputs": [VALUE, ...], "kwargs": {"name": VALUE, ...}}   ("kwargs" optional)
               -> 200 {"outputs": [VALUE, ...], "structure": "tuple"|"list"|"single"}
               Content-Type: application/octet-stream
               torch.save of a tuple/list of positional arguments, of
               {"args": [...], "kwargs": {...}} (the zoo's .inputs.pt), or of one tensor
               -> 200 application/octet-stream: torch.save of the model's result as it is
  GET /stats   -> 200 {"replica_id", "actor_name", "node_id", "pid", "model", "requests",
                  "errors", "batches", "batch_sizes", ..., "brisk": Module.stats()}
  Errors:      400 {"error": "<one line>"} for a bad body or a brisk.Error; 500 for anything
               else; the replica goes on serving.

VALUE, in a JSON body and in a JSON answer:
  tensor   {"dtype": "float32", "shape": [2, 3], "data": [1.0, 2.0, ...]}  data: the elements
           flat, row-major (C order), len = prod(shape) (1 for shape []); dtype one of
           _DTYPES below; NaN / Infinity / -Infinity as Python's json writes them
  tuple    {"tuple": [VALUE, ...]}
  list     {"list": [VALUE, ...]}
  dict     {"dict": [[KEY, VALUE], ...]}   KEY a JSON string, number or boolean (pairs keep
           non-string keys and the order)
  scalar   {"value": 3} / {"value": 0.5} / {"value": true} / {"value": "s"} / {"value": null};
           in inputs a bare JSON number, boolean, string or null is accepted as well
"outputs" is the result seen as a sequence: a tuple or list result gives one VALUE per
element ("structure" says which), anything else (a tensor, a dict, a number) one VALUE
("structure": "single").

Batching: requests wait up to batch_wait_timeout_s for up to max_batch_size others (Ray
Serve's @serve.batch); see BriskServer._run_batch for which ones are concatenated.
"""
import asyncio
import concurrent.futures
import io
import json
import math
import os
import threading
import time

import torch

__all__ = ["BriskServer", "app", "build_app", "decode_value", "encode_value",
           "decode_request_json", "encode_result_json"]

JSON_TYPE = "application/json"
BINARY_TYPE = "application/octet-stream"

# The JSON dtype names: torch's own (torch.float32 -> "float32").
_DTYPES = {name: getattr(torch, name) for name in (
    "float32", "float64", "float16", "bfloat16",
    "int8", "int16", "int32", "int64", "uint8", "bool")}
_DTYPE_NAMES = {v: k for k, v in _DTYPES.items()}


class BadRequest(ValueError):
    """A body that cannot be read as an inference request (HTTP 400)."""


def _one_line(text):
    return " ".join(str(text).split())


# --- the JSON encoding (no Ray needed: the client and tests use it too) ---------------

def encode_value(v):
    """A Python/torch value as the JSON VALUE of the module docstring."""
    if isinstance(v, torch.Tensor):
        t = v.detach().cpu()
        if t.dtype not in _DTYPE_NAMES:
            raise BadRequest(f"cannot encode a {t.dtype} tensor as JSON (dtypes: "
                             f"{', '.join(_DTYPES)}; use the binary body)")
        if t.dtype == torch.bfloat16 or t.dtype == torch.float16:
            data = t.float().reshape(-1).tolist()
        else:
            data = t.reshape(-1).tolist()
        return {"dtype": _DTYPE_NAMES[t.dtype], "shape": list(t.shape), "data": data}
    if isinstance(v, tuple):
        return {"tuple": [encode_value(x) for x in v]}
    if isinstance(v, list):
        return {"list": [encode_value(x) for x in v]}
    if isinstance(v, dict):
        return {"dict": [[_encode_key(k), encode_value(x)] for k, x in v.items()]}
    if v is None or isinstance(v, (bool, int, float, str)):
        return {"value": v}
    raise BadRequest(f"cannot encode a {type(v).__name__} as JSON")


def _encode_key(k):
    if isinstance(k, (str, bool, int, float)):
        return k
    raise BadRequest(f"cannot encode a dict key of type {type(k).__name__} as JSON")


def decode_value(d, where="input"):
    """The JSON VALUE d as a Python/torch value (BadRequest says what is wrong and where)."""
    if d is None or isinstance(d, (bool, int, float, str)):
        return d
    if not isinstance(d, dict):
        raise BadRequest(f"{where}: expected an object (tensor, tuple, list, dict or value), "
                         f"got a JSON {type(d).__name__}")
    if "dtype" in d:
        return _decode_tensor(d, where)
    if len(d) != 1:
        raise BadRequest(f"{where}: expected one of the keys dtype/tuple/list/dict/value, "
                         f"got {sorted(d)}")
    (kind, body), = d.items()
    if kind in ("tuple", "list"):
        if not isinstance(body, list):
            raise BadRequest(f"{where}.{kind}: expected an array")
        items = [decode_value(x, f"{where}.{kind}[{i}]") for i, x in enumerate(body)]
        return tuple(items) if kind == "tuple" else items
    if kind == "dict":
        if not isinstance(body, list) or not all(
                isinstance(p, list) and len(p) == 2 for p in body):
            raise BadRequest(f"{where}.dict: expected an array of [key, value] pairs")
        out = {}
        for i, (k, x) in enumerate(body):
            if not isinstance(k, (str, bool, int, float)):
                raise BadRequest(f"{where}.dict[{i}]: a key must be a string, number or boolean")
            out[k] = decode_value(x, f"{where}.dict[{i}]")
        return out
    if kind == "value":
        if body is not None and not isinstance(body, (bool, int, float, str)):
            raise BadRequest(f"{where}.value: expected a number, boolean, string or null")
        return body
    raise BadRequest(f"{where}: unknown key {kind!r} (dtype/tuple/list/dict/value)")


def _decode_tensor(d, where):
    extra = set(d) - {"dtype", "shape", "data"}
    if extra:
        raise BadRequest(f"{where}: unknown tensor keys {sorted(extra)}")
    name = d.get("dtype")
    if name not in _DTYPES:
        raise BadRequest(f"{where}: dtype {name!r} is not one of {', '.join(_DTYPES)}")
    shape = d.get("shape")
    if not isinstance(shape, list) or not all(
            isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape):
        raise BadRequest(f"{where}: shape must be an array of non-negative integers")
    data = d.get("data")
    if not isinstance(data, list):
        raise BadRequest(f"{where}: data must be a flat array of numbers")
    n = math.prod(shape)
    if len(data) != n:
        raise BadRequest(f"{where}: shape {shape} has {n} elements but data has {len(data)}")
    dtype = _DTYPES[name]
    try:
        if dtype in (torch.float16, torch.bfloat16):
            t = torch.tensor(data, dtype=torch.float32).to(dtype)
        else:
            t = torch.tensor(data, dtype=dtype)
    except (TypeError, ValueError, RuntimeError, OverflowError) as e:
        raise BadRequest(f"{where}: data is not a flat array of {name} values "
                         f"({_one_line(e)})") from None
    if t.dim() != 1 and n != 0:  # nested arrays in data
        raise BadRequest(f"{where}: data must be flat (row-major), not nested")
    return t.reshape(shape)


def decode_request_json(body):
    """A JSON request body -> (args list, kwargs dict)."""
    try:
        req = json.loads(body)
    except (ValueError, UnicodeDecodeError) as e:
        raise BadRequest(f"the body is not JSON ({_one_line(e)})") from None
    if not isinstance(req, dict) or "inputs" not in req:
        raise BadRequest('expected a JSON object {"inputs": [...]}')
    extra = set(req) - {"inputs", "kwargs"}
    if extra:
        raise BadRequest(f"unknown request keys {sorted(extra)} (inputs, kwargs)")
    inputs = req["inputs"]
    if not isinstance(inputs, list):
        raise BadRequest('"inputs" must be an array of positional arguments')
    args = [decode_value(x, f"inputs[{i}]") for i, x in enumerate(inputs)]
    kw = req.get("kwargs", {})
    if not isinstance(kw, dict):
        raise BadRequest('"kwargs" must be an object {"name": VALUE}')
    kwargs = {k: decode_value(x, f"kwargs.{k}") for k, x in kw.items()}
    return args, kwargs


def encode_result_json(result):
    """The model's result -> the JSON answer {"outputs": [...], "structure": ...}."""
    if isinstance(result, tuple):
        return {"outputs": [encode_value(x) for x in result], "structure": "tuple"}
    if isinstance(result, list):
        return {"outputs": [encode_value(x) for x in result], "structure": "list"}
    return {"outputs": [encode_value(result)], "structure": "single"}


def decode_result_json(answer):
    """The inverse of encode_result_json (what a Python client does with an answer)."""
    outs = [decode_value(x, f"outputs[{i}]") for i, x in enumerate(answer["outputs"])]
    structure = answer.get("structure", "single")
    if structure == "tuple":
        return tuple(outs)
    if structure == "list":
        return outs
    return outs[0]


def decode_request_binary(body):
    """A torch.save body -> (args list, kwargs dict). weights_only=True: a body can hold
    tensors, tuples, lists, dicts and numbers, never code."""
    try:
        obj = torch.load(io.BytesIO(body), map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises several types for a damaged or unsafe file
        raise BadRequest(f"the body is not a torch.save file of tensors ({_one_line(e)})") from None
    if isinstance(obj, dict) and set(obj) <= {"args", "kwargs"} and "args" in obj:
        args, kwargs = obj["args"], obj.get("kwargs") or {}
        if not isinstance(args, (list, tuple)) or not isinstance(kwargs, dict):
            raise BadRequest('{"args": [...], "kwargs": {...}}: args must be a list or tuple, '
                             'kwargs a dict')
        return list(args), dict(kwargs)
    if isinstance(obj, (list, tuple)):
        return list(obj), {}
    return [obj], {}


def encode_result_binary(result):
    buf = io.BytesIO()
    torch.save(result, buf)
    return buf.getvalue()


# --- batching ---------------------------------------------------------------------------

def _concat_key(args, kwargs):
    """What requests must share to run as one concatenated batch: no keyword arguments and
    only tensor positional arguments with at least one dimension, whose dtypes and trailing
    shapes (all but dim 0) match. None: this request runs on its own."""
    if kwargs or not args:
        return None
    key = []
    for a in args:
        if not isinstance(a, torch.Tensor) or a.dim() == 0 or a.layout != torch.strided:
            return None
        key.append((a.dtype, tuple(a.shape[1:])))
    return tuple(key)


def _split_output(out, sizes):
    """Splits a batched result along dim 0 into len(sizes) results, or None when some part of
    it is not a tensor whose dim 0 is sum(sizes) (then the requests are run one by one)."""
    total = sum(sizes)
    if isinstance(out, torch.Tensor):
        if out.dim() == 0 or out.shape[0] != total:
            return None
        # clone: a view would keep (and torch.save would write) the whole batch's storage.
        return [p.clone() for p in torch.split(out, sizes, dim=0)]
    if isinstance(out, (tuple, list)):
        parts = [_split_output(x, sizes) for x in out]
        if any(p is None for p in parts):
            return None
        per = [type(out)(p[i] for p in parts) for i in range(len(sizes))]
        return per
    if isinstance(out, dict):
        parts = {k: _split_output(x, sizes) for k, x in out.items()}
        if any(p is None for p in parts.values()):
            return None
        return [{k: p[i] for k, p in parts.items()} for i in range(len(sizes))]
    return None


class _Request:
    __slots__ = ("args", "kwargs")

    def __init__(self, args, kwargs):
        self.args = args
        self.kwargs = kwargs


class BriskServer:
    """The replica's object: one brisk Module, an HTTP entry point (__call__) and a batched
    runner. Plain Python (no Ray at import); app() wraps it with serve.deployment, and the
    replica, which Ray started, imports Ray's serve.batch when it is constructed.

    model: path of a TorchScript file or PT2 archive, read on the replica's machine (a
    relative path is taken from $BRISK_SERVE_ROOT when set, else the replica's working
    directory). brisk_options: keyword options of brisk.load. concat_batches=False runs
    every request of a batch on its own (models whose rows are not independent)."""

    def __init__(self, model, max_batch_size=8, batch_wait_timeout_s=0.005,
                 concat_batches=True, brisk_options=None):
        import brisk
        import ray
        from ray import serve

        path = os.path.expanduser(os.fspath(model))
        if not os.path.isabs(path) and os.environ.get("BRISK_SERVE_ROOT"):
            path = os.path.join(os.environ["BRISK_SERVE_ROOT"], path)
        path = os.path.abspath(path)
        self._model_path = path
        self._brisk = brisk
        self._options = dict(brisk_options or {})
        self.module = brisk.load(path, **self._options)  # a brisk.Error fails the replica
        self._concat = bool(concat_batches)
        # One thread runs the model: Module calls release the GIL, so the event loop goes on
        # reading requests, filling the next batch and answering /stats meanwhile.
        self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="brisk-run")
        self._lock = threading.Lock()
        self._counts = {"requests": 0, "errors": 0, "batches": 0, "model_runs": 0,
                        "concatenated_requests": 0, "unsplittable_batches": 0}
        self._batch_sizes = {}
        self._started = time.time()

        async def run_batch(items):
            return await self._run_batch(items)

        self._batched = serve.batch(max_batch_size=int(max_batch_size),
                                    batch_wait_timeout_s=float(batch_wait_timeout_s))(run_batch)
        self._max_batch_size = int(max_batch_size)
        self._batch_wait_timeout_s = float(batch_wait_timeout_s)

        ctx = serve.get_replica_context()
        self._replica_id = ctx.replica_id.unique_id
        self._actor_name = ctx.replica_id.to_full_id_str()  # ray.get_actor(name, namespace="serve")
        self._node_id = ray.get_runtime_context().get_node_id()

    def reconfigure(self, user_config):
        """user_config {"max_batch_size": n, "batch_wait_timeout_s": s} (Serve's user_config,
        updatable without restarting replicas)."""
        user_config = user_config or {}
        if "max_batch_size" in user_config:
            self._max_batch_size = int(user_config["max_batch_size"])
            self._batched.set_max_batch_size(self._max_batch_size)
        if "batch_wait_timeout_s" in user_config:
            self._batch_wait_timeout_s = float(user_config["batch_wait_timeout_s"])
            self._batched.set_batch_wait_timeout_s(self._batch_wait_timeout_s)

    # -- model runs (on the brisk-run thread) --

    def _run_one(self, req):
        with self._lock:
            self._counts["model_runs"] += 1
        return self.module(*req.args, **req.kwargs)

    def _run_group(self, reqs):
        """Runs requests that share a _concat_key as one concatenated call and splits the
        result; returns a result or an exception per request. When the concatenated run
        fails or its result does not split by rows, each request runs on its own, so one bad
        request cannot fail the others and a model whose outputs do not follow the batch
        dimension is still answered right."""
        if len(reqs) > 1:
            sizes = [r.args[0].shape[0] for r in reqs]
            try:
                cat = [torch.cat([r.args[i] for r in reqs], dim=0)
                       for i in range(len(reqs[0].args))]
                with self._lock:
                    self._counts["model_runs"] += 1
                parts = _split_output(self.module(*cat), sizes)
            except Exception:  # noqa: BLE001 - answered request by request below
                parts = None
            if parts is not None:
                with self._lock:
                    self._counts["concatenated_requests"] += len(reqs)
                return parts
            with self._lock:
                self._counts["unsplittable_batches"] += 1
        out = []
        for r in reqs:
            try:
                out.append(self._run_one(r))
            except Exception as e:  # noqa: BLE001 - becomes this request's HTTP error
                out.append(e)
        return out

    def _run_all(self, items):
        # Requests are grouped by _concat_key; a group of several is concatenated along dim 0
        # and run once. Requests that cannot be concatenated (keyword arguments, non-tensor
        # or 0-d arguments, a dtype or trailing shape no other request has, or
        # concat_batches=False) run one by one.
        groups = {}
        for i, r in enumerate(items):
            key = _concat_key(r.args, r.kwargs) if self._concat else None
            groups.setdefault(key if key is not None else ("alone", i), []).append(i)
        results = [None] * len(items)
        for idx in groups.values():
            for i, res in zip(idx, self._run_group([items[i] for i in idx])):
                results[i] = res
        return results

    async def _run_batch(self, items):
        with self._lock:
            self._counts["batches"] += 1
            self._batch_sizes[len(items)] = self._batch_sizes.get(len(items), 0) + 1
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, self._run_all, items)

    async def infer(self, args, kwargs=None):
        """One request through the batcher (also callable through a DeploymentHandle)."""
        res = await self._batched(_Request(list(args), dict(kwargs or {})))
        if isinstance(res, BaseException):
            raise res
        return res

    # -- HTTP --

    def stats(self):
        with self._lock:
            counts = dict(self._counts)
            sizes = {str(k): v for k, v in sorted(self._batch_sizes.items())}
        return {
            "replica_id": self._replica_id,
            "actor_name": self._actor_name,
            "node_id": self._node_id,
            "pid": os.getpid(),
            "model": self._model_path,
            "options": self._options,
            **counts,
            "batch_sizes": sizes,
            "max_batch_size": self._max_batch_size,
            "batch_wait_timeout_s": self._batch_wait_timeout_s,
            "concat_batches": self._concat,
            "torch_threads": torch.get_num_threads(),
            "uptime_s": round(time.time() - self._started, 3),
            "brisk": self.module.stats(),
        }

    async def __call__(self, request):
        from starlette.responses import JSONResponse, Response

        def error(status, text):
            with self._lock:
                self._counts["errors"] += 1
            return JSONResponse({"error": _one_line(text)}, status_code=status)

        try:
            path = request.url.path
            root = request.scope.get("root_path", "")
            if root and path.startswith(root):
                path = path[len(root):]
            path = "/" + path.strip("/")
            if path == "/stats":
                if request.method != "GET":
                    return error(405, "GET /stats")
                return Response(json.dumps(self.stats(), default=str), media_type=JSON_TYPE)
            if path != "/":
                return error(404, f"no route {path} (POST / to run the model, GET /stats)")
            if request.method != "POST":
                return error(405, "POST / with a JSON or a torch.save body runs the model; "
                                  "GET /stats")
            ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
            body = await request.body()
            if ctype == JSON_TYPE:
                args, kwargs = decode_request_json(body)
            elif ctype == BINARY_TYPE:
                args, kwargs = decode_request_binary(body)
            else:
                return error(400, f"Content-Type {ctype or '(none)'}: expected {JSON_TYPE} or "
                                  f"{BINARY_TYPE}")
            result = await self.infer(args, kwargs)
            if ctype == JSON_TYPE:
                payload = json.dumps(encode_result_json(result)).encode()
            else:
                payload = encode_result_binary(result)
        except BadRequest as e:
            return error(400, e)
        except self._brisk.Error as e:
            return error(400, f"brisk: {e}")
        except Exception as e:  # noqa: BLE001 - never let a request take the replica down
            return error(500, f"{type(e).__name__}: {e}")
        with self._lock:
            self._counts["requests"] += 1
        return Response(payload, media_type=ctype)


# --- deploy time --------------------------------------------------------------------------

def app(model, *, max_batch_size=8, batch_wait_timeout_s=0.005, num_replicas=1,
        ray_actor_options=None, max_ongoing_requests=None, name="brisk",
        concat_batches=True, user_config=None, **brisk_options):
    """A Ray Serve application: num_replicas replicas of BriskServer(model), each with its own
    brisk Module (brisk.load(model, **brisk_options)). ray_actor_options: Ray's per-replica
    resources (Serve's default is {"num_cpus": 1}). max_ongoing_requests: requests a replica
    accepts at once (default max(2 * max_batch_size, 8), so that a batch can fill while the
    previous one runs). user_config: Serve's, handed to BriskServer.reconfigure (batch size
    and wait changed without restarting replicas). Returns the bound application for
    serve.run."""
    from ray import serve

    opts = {
        "name": name,
        "num_replicas": int(num_replicas),
        "max_ongoing_requests": int(max_ongoing_requests or max(2 * int(max_batch_size), 8)),
    }
    if ray_actor_options:
        opts["ray_actor_options"] = dict(ray_actor_options)
    if user_config:
        opts["user_config"] = dict(user_config)
    deployment = serve.deployment(BriskServer).options(**opts)
    return deployment.bind(os.fspath(model), max_batch_size=int(max_batch_size),
                           batch_wait_timeout_s=float(batch_wait_timeout_s),
                           concat_batches=bool(concat_batches), brisk_options=brisk_options)


def build_app(args):
    """The application builder of a `serve run` config (import_path: brisk.serve:build_app):
    args = {"model": path, plus any of app()'s keywords, plus brisk.load options either
    flat or under "brisk_options"}."""
    args = dict(args or {})
    if "model" not in args:
        raise ValueError("brisk.serve.build_app: args must name the model (args: {model: PATH})")
    nested = args.pop("brisk_options", None) or {}
    return app(**args, **nested)


def __getattr__(name):
    # brisk.serve.BriskDeployment: the Serve deployment (Ray is imported on first use only).
    if name == "BriskDeployment":
        from ray import serve
        return serve.deployment(BriskServer, name="BriskDeployment")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
