"""brisk.serve throughput and latency: requests/s and p50/p99 latency for each model x
replica count x max batch size, over HTTP through Ray Serve's proxy, on one machine.

    export PYTHONPATH=$PWD/bazel-bin/python/site
    /opt/brisk/venv/bin/python3 examples/ray/bench.py \
        --model mlp=bazel-bin/tools/zoo/mlp.pt --model resnet18=bazel-bin/tools/zoo/resnet18.pt \
        [--replicas 1,2] [--batch-sizes 1,8] [--clients 16] [--requests 400] \
        [--json serve_bench.json]

Each model's inputs are <model>.inputs.pt beside it (the zoo's; one sample each), sent as
binary torch.save bodies (the JSON body of a 1x3x224x224 image is 3 MB of text and would
measure the JSON parser). A cell: deploy (serve.run), wait until every replica answers,
`--warmup` requests, then `--requests` requests from `--clients` threads, each on its own
keep-alive HTTP connection, each sending its next request when the last one is answered
(closed loop). Bounded: a cell stops issuing requests after `--cell-seconds`, every request
has a timeout, and the whole run ends at `--max-seconds`. The first answer of each cell is
checked against torch.jit.load(model).

The local Ray instance lives on 127.0.0.1 only (RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0, no
dashboard, no usage stats), its workers at nice 0 (RAY_worker_niceness; Ray's default is
15); each replica takes `--replica-cpus` CPUs of Ray's --num-cpus and runs brisk with
intra_op_threads=--threads.
"""
import argparse
import concurrent.futures
import http.client
import io
import json
import os
import socket
import statistics
import sys
import tempfile
import threading
import time

# Before Ray is imported; inherited by every Ray process this starts.
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
# Ray starts its workers (the replicas, Serve's proxy) at nice 15; the clients here run at 0.
# Equal terms, so that the numbers are not the share a busy machine leaves to nice 15.
os.environ.setdefault("RAY_worker_niceness", "0")

import torch  # noqa: E402


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _percentile(xs, q):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


class Conn:
    """One keep-alive HTTP connection (reconnects after an error)."""

    def __init__(self, port, timeout):
        self.port, self.timeout, self.c = port, timeout, None

    def request(self, method, path, body=None, ctype=None):
        for attempt in (0, 1):
            if self.c is None:
                self.c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
            try:
                self.c.request(method, path, body=body,
                               headers={"Content-Type": ctype} if ctype else {})
                r = self.c.getresponse()
                return r.status, r.read()
            except (OSError, http.client.HTTPException):
                self.c.close()
                self.c = None
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def close(self):
        if self.c is not None:
            self.c.close()


def _stats_of_all(port, replicas, tries=60):
    seen = {}
    c = Conn(port, 30)
    try:
        for _ in range(tries):
            status, data = c.request("GET", "/stats")
            if status == 200:
                s = json.loads(data)
                seen[s["replica_id"]] = s
            if len(seen) >= replicas:
                break
    finally:
        c.close()
    return seen


def run_cell(a, serve, brisk_serve, name, path, replicas, batch, body, expected, port):
    app = brisk_serve.app(path, max_batch_size=batch, batch_wait_timeout_s=a.batch_wait,
                          num_replicas=replicas, ray_actor_options={"num_cpus": a.replica_cpus},
                          max_ongoing_requests=max(2 * batch, a.clients),
                          intra_op_threads=a.threads)
    t = time.monotonic()
    serve.run(app, name="bench", route_prefix="/")
    reps = _stats_of_all(port, replicas)
    if len(reps) < replicas:
        raise RuntimeError(f"{name}: only {len(reps)} of {replicas} replicas answer /stats")
    deploy_s = time.monotonic() - t

    # Check one answer, then warm up (brisk plans memory on the first runs of a shape).
    c = Conn(port, a.request_timeout)
    status, data = c.request("POST", "/", body, "application/octet-stream")
    if status != 200:
        raise RuntimeError(f"{name}: HTTP {status}: {data[:300]!r}")
    got = torch.load(io.BytesIO(data), weights_only=True)
    scale = max(1.0, expected.abs().max().item())
    if not torch.allclose(got, expected, rtol=1e-4, atol=1e-4 * scale):
        raise RuntimeError(f"{name}: answer differs from TorchScript by "
                           f"{(got - expected).abs().max().item():.3g}")
    c.close()

    def closed_loop(n_total, deadline):
        lat, errors = [], []
        lock = threading.Lock()
        issued = [0]

        def client():
            conn = Conn(port, a.request_timeout)
            try:
                while True:
                    with lock:
                        if issued[0] >= n_total or time.monotonic() > deadline:
                            return
                        issued[0] += 1
                    t0 = time.perf_counter()
                    try:
                        status, data = conn.request("POST", "/", body, "application/octet-stream")
                    except (OSError, http.client.HTTPException) as e:
                        status, data = None, str(e).encode()
                    dt = time.perf_counter() - t0
                    with lock:
                        if status == 200:
                            lat.append(dt)
                        else:
                            errors.append(f"{status}: {data[:120]!r}")
            finally:
                conn.close()

        t0 = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(a.clients) as pool:
            for f in [pool.submit(client) for _ in range(a.clients)]:
                f.result()
        return lat, errors, time.perf_counter() - t0

    closed_loop(a.warmup, time.monotonic() + a.cell_seconds)
    before = _stats_of_all(port, replicas)
    n = a.requests if not a.requests_for.get(name) else a.requests_for[name]
    lat, errors, wall = closed_loop(n, time.monotonic() + a.cell_seconds)
    after = _stats_of_all(port, replicas)
    batches = sum(s["batches"] for s in after.values()) - sum(s["batches"] for s in before.values())
    served = sum(s["requests"] for s in after.values()) - sum(s["requests"] for s in before.values())
    return {
        "model": name, "replicas": replicas, "max_batch_size": batch,
        "requests": len(lat), "errors": len(errors), "first_errors": errors[:3],
        "seconds": round(wall, 3), "rps": round(len(lat) / wall, 2) if wall else 0.0,
        "p50_ms": round(_percentile(lat, 0.50) * 1e3, 2),
        "p99_ms": round(_percentile(lat, 0.99) * 1e3, 2),
        "mean_ms": round(statistics.fmean(lat) * 1e3, 2) if lat else float("nan"),
        "mean_batch": round(served / batches, 2) if batches else float("nan"),
        "deploy_s": round(deploy_s, 1),
        "torch_threads_per_replica": sorted({s["torch_threads"] for s in after.values()}),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", action="append", required=True, metavar="NAME=PATH",
                    help="a model to serve (repeat); inputs from PATH's .inputs.pt")
    ap.add_argument("--replicas", default="1,2")
    ap.add_argument("--batch-sizes", default="1,8")
    ap.add_argument("--clients", type=int, default=16, help="concurrent closed-loop clients")
    ap.add_argument("--requests", type=int, default=400, help="timed requests per cell")
    ap.add_argument("--requests-for", action="append", default=[], metavar="NAME=N",
                    help="timed requests per cell for one model (e.g. resnet18=200)")
    ap.add_argument("--warmup", type=int, default=32)
    ap.add_argument("--batch-wait", type=float, default=0.005, help="batch_wait_timeout_s")
    ap.add_argument("--threads", type=int, default=1, help="brisk intra_op_threads per replica")
    ap.add_argument("--replica-cpus", type=float, default=1.0, help="Ray num_cpus per replica")
    ap.add_argument("--num-cpus", type=int, default=2, help="Ray's CPUs on this machine")
    ap.add_argument("--request-timeout", type=float, default=60.0)
    ap.add_argument("--cell-seconds", type=float, default=120.0)
    ap.add_argument("--max-seconds", type=float, default=1800.0)
    ap.add_argument("--json", default="serve_bench.json")
    a = ap.parse_args()
    load_at_start = os.getloadavg()
    a.requests_for = {k: int(v) for k, v in (x.split("=", 1) for x in a.requests_for)}
    models = [m.split("=", 1) for m in a.model]
    replica_counts = [int(x) for x in a.replicas.split(",")]
    batch_sizes = [int(x) for x in a.batch_sizes.split(",")]
    os.environ.setdefault("OMP_NUM_THREADS", str(a.threads))
    os.environ.setdefault("MKL_NUM_THREADS", str(a.threads))
    torch.set_num_threads(1)

    import ray
    from ray import serve
    import brisk.serve as brisk_serve

    tmp = tempfile.mkdtemp(prefix="brisk_bench_", dir="/tmp")
    os.environ["RAY_TMPDIR"] = tmp  # short socket paths, removed by ray.shutdown's caller
    t_start = time.monotonic()
    ray.init(num_cpus=a.num_cpus, include_dashboard=False, _node_ip_address="127.0.0.1",
             object_store_memory=200 * 1024 * 1024, log_to_driver=False)
    port = _free_port()
    serve.start(proxy_location="HeadOnly", http_options={"host": "127.0.0.1", "port": port})
    cells = []
    try:
        for name, path in models:
            path = os.path.abspath(path)
            inputs = torch.load(path[:-3] + ".inputs.pt", weights_only=True)
            args = list(inputs["args"]) if isinstance(inputs, dict) else list(inputs)
            buf = io.BytesIO()
            torch.save(tuple(args), buf)
            with torch.no_grad():
                expected = torch.jit.load(path).eval()(*args)
            for replicas in replica_counts:
                for batch in batch_sizes:
                    if time.monotonic() - t_start > a.max_seconds:
                        print(f"--max-seconds reached, skipping {name} r{replicas} b{batch}")
                        continue
                    cell = run_cell(a, serve, brisk_serve, name, path, replicas, batch,
                                    buf.getvalue(), expected, port)
                    cells.append(cell)
                    print(f"{name:9s} replicas={replicas} batch={batch}: {cell['rps']:8.1f} req/s "
                          f"p50 {cell['p50_ms']:7.2f} ms p99 {cell['p99_ms']:7.2f} ms "
                          f"mean batch {cell['mean_batch']} errors {cell['errors']}", flush=True)
    finally:
        try:
            serve.shutdown()
        finally:
            ray.shutdown()
            import shutil
            shutil.rmtree(tmp, ignore_errors=True)

    settings = {k: v for k, v in vars(a).items() if k not in ("json",)}
    settings.update(cpu_count=os.cpu_count(), ray=ray.__version__, torch=torch.__version__,
                    OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS"),
                    RAY_worker_niceness=os.environ.get("RAY_worker_niceness"),
                    load_average_at_start=load_at_start, load_average_at_end=os.getloadavg(),
                    MKL_NUM_THREADS=os.environ.get("MKL_NUM_THREADS"),
                    body="binary (torch.save)", proxy="Ray Serve HTTP proxy, HeadOnly")
    print()
    print(f"| model | replicas | max batch | req/s | p50 ms | p99 ms | mean batch | errors |")
    print(f"|---|---:|---:|---:|---:|---:|---:|---:|")
    for c in cells:
        print(f"| {c['model']} | {c['replicas']} | {c['max_batch_size']} | {c['rps']:.1f} | "
              f"{c['p50_ms']:.2f} | {c['p99_ms']:.2f} | {c['mean_batch']} | {c['errors']} |")
    print(f"\n{a.clients} clients, binary bodies, brisk intra_op_threads={a.threads}, "
          f"{a.replica_cpus} Ray CPU per replica of {a.num_cpus}; load average "
          f"{load_at_start[0]:.1f} at start, {settings['load_average_at_end'][0]:.1f} at end")
    with open(a.json, "w") as f:
        json.dump({"settings": settings, "cells": cells}, f, indent=2)
    print(f"\nwrote {a.json}")
    return 0 if all(c["errors"] == 0 for c in cells) else 1


if __name__ == "__main__":
    sys.exit(main())
