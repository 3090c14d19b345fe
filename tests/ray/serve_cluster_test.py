"""brisk.serve on a two-node Ray cluster on loopback (Ray's own multi-node test cluster,
ray.cluster_utils.Cluster: two raylets on this machine, 1 CPU each, every address
127.0.0.1).

Two replicas of the zoo's mlp (one per node: each replica takes the node's one CPU) behind
Serve's HTTP proxy on the head node. A bounded burst of JSON and binary requests, every
answer checked against torch.jit.load(model)(inputs); bad bodies and brisk errors answered
400 while the replicas go on; then one replica is killed (ray.kill) in the middle of a
second burst, and every request must still be answered, and answered right.

Retries are the client's. Ray Serve's router does pick another replica for a request it has
not handed over yet (reserving a slot on a dead replica fails first), but a request that the
replica held when it died is answered 500 "Internal Server Error" by the HTTP proxy and
never retried. Inference is idempotent, so the client (post() below) retries a connection
error or a 5xx up to ATTEMPTS times with a growing pause; a 4xx is never retried. The test
asserts that every request succeeded within that bound and the burst's deadline, and
prints how many needed a retry.

Bounded: BURST and KILL_BURST requests from CLIENTS threads, a timeout on every wait, and
a watchdog that stops the cluster and fails the process after HARD_LIMIT_S. Everything is
shut down in tearDownClass.
"""
import concurrent.futures
import faulthandler
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request

import torch

# Before Ray is imported (it reads them once), and inherited by every Ray process started here:
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"  # no usage report leaves the machine
# Every address loopback: Ray replaces 127.0.0.1 in ray.init(address=...) by "this machine's
# address" (its route to the outside) unless this switch is off, which makes that answer
# 127.0.0.1 (what Ray does on macOS and Windows); the nodes' node_ip_address does the same
# for the raylets.
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
# One proxy (on the head node) for both nodes: without this it sends every request to the
# replica on its own node while that one has room, and the other replica would idle.
os.environ["RAY_SERVE_PROXY_PREFER_LOCAL_NODE_ROUTING"] = "0"

HERE = os.path.dirname(os.path.abspath(__file__))
RUNFILES = os.path.join(os.environ.get("TEST_SRCDIR", ""), "brisk")
for d in (os.path.join(RUNFILES, "tests", "python"), os.path.join(RUNFILES, "tools"),
          os.path.join(HERE, "..", "python"), os.path.join(HERE, "..", "..", "tools")):
    if os.path.isdir(d):
        sys.path.append(d)
import junit  # noqa: E402
import outputs_close  # noqa: E402

# BRISK_ZOO: a directory with mlp.pt, for running this file outside Bazel.
ZOO = os.environ.get("BRISK_ZOO") or os.path.join(RUNFILES, "tools", "zoo")
MODEL = os.path.join(ZOO, "mlp.pt")

HARD_LIMIT_S = float(os.environ.get("BRISK_RAY_TEST_LIMIT_S", 300))  # the whole test
BURST = 40
KILL_BURST = 60
CLIENTS = 8
ATTEMPTS = 6  # per request in the kill burst (1 + 5 retries)
REQUEST_TIMEOUT_S = 30
BURST_DEADLINE_S = 90
START_TIMEOUT_S = 120
MAX_BATCH = 4

# Batched and single-row GEMMs sum in other orders: a tolerance that scales with the values.
RULES = outputs_close.Rules(rtol=1e-4, atol=1e-5, atol_scale=1e-4, scale_floor=1.0)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _inputs(i, heavy=False):
    """Request i's inputs: 1 to 3 rows of the mlp's 256 features, from a seed; heavy: the
    binary requests (odd i) carry 256 to 258 rows, so that runs take long enough for a
    replica to be killed while it holds some."""
    g = torch.Generator().manual_seed(1000 + i)
    rows = 1 + i % 3 + (256 if heavy and i % 2 else 0)
    return (torch.randn(rows, 256, generator=g),)


def _body(args, binary):
    import brisk.serve as bs
    if binary:
        buf = io.BytesIO()
        torch.save(tuple(args), buf)
        return buf.getvalue(), bs.BINARY_TYPE
    return json.dumps({"inputs": [bs.encode_value(a) for a in args]}).encode(), bs.JSON_TYPE


def _answer(data, binary):
    import brisk.serve as bs
    if binary:
        return torch.load(io.BytesIO(data), weights_only=True)
    return bs.decode_result_json(json.loads(data))


class Client:
    def __init__(self, url):
        self.url = url

    def request(self, path="/", body=None, ctype=None, timeout=REQUEST_TIMEOUT_S):
        """(status, body bytes); raises only for transport errors."""
        req = urllib.request.Request(self.url + path, data=body, method="POST" if body is not None else "GET")
        if ctype:
            req.add_header("Content-Type", ctype)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def post(self, args, binary, attempts=1):
        """The model's result for args, retrying a transport error or a 5xx (idempotent
        inference) up to `attempts` times. Returns (result, failures before success)."""
        body, ctype = _body(args, binary)
        failures = []
        for attempt in range(attempts):
            try:
                status, data = self.request("/", body, ctype)
                if status == 200:
                    return _answer(data, binary), failures
                failures.append(f"HTTP {status}: {data[:200]!r}")
                if status < 500:
                    break  # a 4xx is the request's own fault: no retry
            except (OSError, urllib.error.URLError) as e:  # reset, refused, timeout
                failures.append(f"{type(e).__name__}: {e}")
            time.sleep(min(0.25 * 2 ** attempt, 4.0))
        raise AssertionError(f"no answer after {len(failures)} attempts: {failures}")

    def stats(self):
        status, data = self.request("/stats")
        assert status == 200, (status, data)
        return json.loads(data)


class ImportTest(unittest.TestCase):
    def test_import_brisk_does_not_import_ray(self):
        code = ("import sys, brisk, brisk.serve; "
                "print(sorted(m for m in sys.modules "
                "if m.split('.')[0] in ('ray', 'starlette', 'fastapi', 'uvicorn')))")
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip().splitlines()[-1], "[]", p.stdout)

    def test_json_values_round_trip(self):
        import brisk.serve as bs
        value = (torch.arange(6, dtype=torch.float32).reshape(2, 3), [torch.tensor(True), 3],
                 {"a": torch.zeros(0, 4, dtype=torch.int64), 7: None, "h": torch.ones(2).half()},
                 torch.tensor(2.5, dtype=torch.float64))
        back = bs.decode_value(json.loads(json.dumps(bs.encode_value(value))))
        outputs_close.check(back, value, outputs_close.Rules(strict_types=True, sequences="same"))
        enc = bs.encode_result_json(value)
        self.assertEqual(enc["structure"], "tuple")
        self.assertEqual(len(enc["outputs"]), 4)
        self.assertEqual(enc["outputs"][0], {"dtype": "float32", "shape": [2, 3],
                                             "data": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]})
        for bad in ({"dtype": "float32", "shape": [2], "data": [1.0]},
                    {"dtype": "complex64", "shape": [1], "data": [1.0]},
                    {"dtype": "float32", "shape": [1, 1], "data": [[1.0]]},
                    {"tensor": []}, [1, 2]):
            with self.assertRaises(bs.BadRequest):
                bs.decode_value(bad)


class BatchingTest(unittest.TestCase):
    """BriskServer's concatenation (no Ray: the runner without its replica)."""

    def server(self, fn):
        import brisk.serve as bs
        s = object.__new__(bs.BriskServer)
        s.module, s._concat, s._lock = fn, True, threading.Lock()
        s._counts = {"model_runs": 0, "concatenated_requests": 0, "unsplittable_batches": 0}
        self.calls = []

        def module(*args):
            self.calls.append([tuple(a.shape) for a in args])
            return fn(*args)

        s.module = module
        return s, bs._Request

    def test_concatenates_alike_requests_and_splits_rows(self):
        s, R = self.server(lambda x, y: (x * 2, {"y": y[:, :1]}))
        items = [R([torch.full((n, 3), float(n)), torch.ones(n, 2)], {}) for n in (1, 2, 3)]
        items.append(R([torch.ones(1, 4), torch.ones(1, 2)], {}))  # another trailing shape
        out = s._run_all(items)
        self.assertEqual(self.calls, [[(6, 3), (6, 2)], [(1, 4), (1, 2)]])
        for n, (x, d) in zip((1, 2, 3), out):
            self.assertTrue(torch.equal(x, torch.full((n, 3), 2.0 * n)))
            self.assertEqual(tuple(d["y"].shape), (n, 1))
            self.assertEqual(x.untyped_storage().nbytes(), x.numel() * 4)  # not a view
        self.assertEqual(s._counts["concatenated_requests"], 3)

    def test_unsplittable_results_and_errors_run_one_by_one(self):
        s, R = self.server(lambda x: x.sum())  # a 0-d result: no rows to split
        out = s._run_all([R([torch.ones(2, 3)], {}), R([torch.ones(1, 3)], {})])
        self.assertEqual([o.item() for o in out], [6.0, 3.0])
        self.assertEqual(s._counts["unsplittable_batches"], 1)

        def picky(x):
            if (x < 0).any():
                raise ValueError("negative input")
            return x + 1
        s, R = self.server(picky)
        out = s._run_all([R([torch.ones(1, 3)], {}), R([-torch.ones(1, 3)], {}),
                          R([torch.ones(1, 3)], {"k": 1})])
        self.assertTrue(torch.equal(out[0], torch.full((1, 3), 2.0)))
        self.assertIsInstance(out[1], ValueError)  # only the bad request fails
        self.assertIsInstance(out[2], TypeError)  # kwargs: alone (and picky has none)


class ServeClusterTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import ray
        from ray import serve
        from ray.cluster_utils import Cluster
        import brisk.serve

        cls.t0 = time.monotonic()
        # A short temporary directory for Ray's sessions: its Unix sockets live there (107
        # characters at most), and Bazel's $TMPDIR, which Ray would take, is long.
        cls.tmp = tempfile.mkdtemp(prefix="brisk_ray_", dir="/tmp")
        os.environ["RAY_TMPDIR"] = cls.tmp
        node = dict(num_cpus=1, object_store_memory=100 * 1024 * 1024,
                    node_ip_address="127.0.0.1")
        cls.cluster = Cluster(initialize_head=True, head_node_args=dict(
            node, include_dashboard=False))
        cls.cluster.add_node(**node)
        cls.cluster.wait_for_nodes(timeout=START_TIMEOUT_S)
        ray.init(address=cls.cluster.address, _node_ip_address="127.0.0.1",
                 log_to_driver=False)
        port = _free_port()
        serve.start(proxy_location="HeadOnly", http_options={"host": "127.0.0.1", "port": port})
        # Two replicas of 1 CPU on two 1-CPU nodes: one replica per node.
        app = brisk.serve.app(MODEL, max_batch_size=MAX_BATCH, batch_wait_timeout_s=0.01,
                              num_replicas=2, ray_actor_options={"num_cpus": 1},
                              intra_op_threads=1)
        done = threading.Event()
        err = []

        def deploy():
            try:
                serve.run(app, name="brisk", route_prefix="/")
            except BaseException as e:  # noqa: BLE001
                err.append(e)
            done.set()

        threading.Thread(target=deploy, daemon=True).start()
        if not done.wait(START_TIMEOUT_S):
            raise AssertionError(f"serve.run did not finish in {START_TIMEOUT_S} s: {serve.status()}")
        if err:
            raise err[0]
        cls.client = Client(f"http://127.0.0.1:{port}")
        print(f"cluster and 2 replicas up in {time.monotonic() - cls.t0:.1f} s", flush=True)
        cls.reference = torch.jit.load(MODEL).eval()

    @classmethod
    def tearDownClass(cls):
        from ray import serve
        import ray
        for step in (serve.shutdown, ray.shutdown, cls.cluster.shutdown):
            try:
                step()
            except Exception as e:  # noqa: BLE001 - the next step still runs
                print(f"teardown: {step.__name__}: {e}", flush=True)
        shutil.rmtree(cls.tmp, ignore_errors=True)
        print(f"whole cluster test: {time.monotonic() - cls.t0:.1f} s", flush=True)

    def expected(self, args):
        with torch.no_grad():
            return self.reference(*args)

    def replicas(self, want=2, tries=40):
        """replica_id -> its /stats, from GETs until `want` distinct replicas answered."""
        seen = {}
        for _ in range(tries):
            s = self.client.stats()
            seen[s["replica_id"]] = s
            if len(seen) >= want:
                break
        return seen

    def burst(self, n, first, attempts, heavy=False):
        """n requests (ids first..first+n-1, JSON and binary alternating) from CLIENTS
        threads; returns {id: failures before success}. Fails on any wrong or missing
        answer. `on_progress(done)` is called after each answer."""
        failures = {}
        done = [0]
        lock = threading.Lock()

        def one(i):
            args = _inputs(i, heavy)
            got, fails = self.client.post(args, binary=bool(i % 2), attempts=attempts)
            outputs_close.check(got, self.expected(args), RULES, f"request {i}")
            with lock:
                done[0] += 1
                if self.on_progress:
                    self.on_progress(done[0])
            return i, fails

        t = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
            futs = [pool.submit(one, i) for i in range(first, first + n)]
            finished, pending = concurrent.futures.wait(futs, timeout=BURST_DEADLINE_S)
            for f in pending:
                f.cancel()
            self.assertFalse(pending, f"{len(pending)} of {n} requests unanswered after "
                                      f"{BURST_DEADLINE_S} s")
            for f in futs:
                i, fails = f.result()  # re-raises a wrong answer or an exhausted retry
                failures[i] = fails
        print(f"burst of {n}: {time.monotonic() - t:.1f} s", flush=True)
        return failures

    on_progress = None

    def test_1_burst(self):
        failures = self.burst(BURST, 0, attempts=1)
        self.assertEqual(sum(len(f) for f in failures.values()), 0)
        reps = self.replicas()
        self.assertEqual(len(reps), 2, "both replicas answer /stats")
        self.assertEqual(len({s["node_id"] for s in reps.values()}), 2,
                         "the two replicas run on the two nodes")
        for s in reps.values():
            self.assertIn("brisk", s)
            self.assertIsInstance(s["brisk"], dict)
            self.assertEqual(s["max_batch_size"], MAX_BATCH)
            self.assertEqual(s["errors"], 0)
        served = sum(s["requests"] for s in reps.values())
        self.assertEqual(served, BURST)
        print("replicas after the burst:", json.dumps(
            {k: {f: s[f] for f in ("requests", "batches", "batch_sizes", "model_runs",
                                   "concatenated_requests")} for k, s in reps.items()}),
            flush=True)

    def test_2_errors_are_400_and_replicas_go_on(self):
        c = self.client
        import brisk.serve as bs
        cases = [
            (b"{not json", bs.JSON_TYPE),
            (json.dumps({"inputs": [{"dtype": "float32", "shape": [2], "data": [1.0]}]}).encode(),
             bs.JSON_TYPE),
            (b"not a torch.save file", bs.BINARY_TYPE),
            (b"x", "text/plain"),
            # a wrong feature count: brisk's own error
            _body((torch.randn(1, 100),), binary=False),
            _body((torch.randn(2, 100),), binary=True),
        ]
        for body, ctype in cases:
            status, data = c.request("/", body, ctype)
            self.assertEqual(status, 400, (ctype, data))
            err = json.loads(data)
            self.assertEqual(list(err), ["error"])
            self.assertNotIn("\n", err["error"])
        status, _ = c.request("/nowhere")
        self.assertEqual(status, 404)
        args = _inputs(7)
        got, _ = c.post(args, binary=False)
        outputs_close.check(got, self.expected(args), RULES, "after errors")

    def test_3_kill_a_replica_during_a_burst(self):
        import ray
        from ray import serve
        reps = self.replicas()
        self.assertEqual(len(reps), 2)
        victim = sorted(reps.values(), key=lambda s: s["replica_id"])[0]
        handle = ray.get_actor(victim["actor_name"], namespace="serve")
        killed = threading.Event()

        def on_progress(done):
            if done == 10 and not killed.is_set():
                killed.set()  # 10 answered, CLIENTS more in flight
                ray.kill(handle, no_restart=True)
                print(f"killed replica {victim['replica_id']} after {done} answers", flush=True)

        self.on_progress = on_progress
        try:
            failures = self.burst(KILL_BURST, 100, attempts=ATTEMPTS, heavy=True)
        finally:
            self.on_progress = None
        self.assertTrue(killed.is_set())
        retried = {i: f for i, f in failures.items() if f}
        print(f"kill burst: {len(retried)} of {KILL_BURST} requests needed a retry "
              f"({sum(len(f) for f in retried.values())} failed attempts): "
              f"{sorted({x.split(':')[0] for f in retried.values() for x in f})}", flush=True)
        if retried:
            print("for example:", next(iter(retried.values()))[0], flush=True)
        # Serve replaces the replica: two replicas answer again, neither the killed one.
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            reps2 = self.replicas(tries=20)
            reps2.pop(victim["replica_id"], None)
            st = serve.status().applications["brisk"].deployments["brisk"]
            if len(reps2) == 2 and st.replica_states.get("RUNNING", 0) == 2:
                break
            self.assertLess(time.monotonic(), deadline,
                            f"not 2 live replicas again: {sorted(reps2)}, {st}")
            time.sleep(1)
        print(f"replaced in {time.monotonic() - deadline + START_TIMEOUT_S:.1f} s after the "
              f"burst: {sorted(reps2)}", flush=True)
        args = _inputs(999)
        got, _ = self.client.post(args, binary=True, attempts=ATTEMPTS)
        outputs_close.check(got, self.expected(args), RULES, "after the replacement")


def _watchdog():
    """HARD_LIMIT_S passed: print every thread's stack, stop the cluster (its processes would
    outlive a plain exit), exit failed."""
    faulthandler.dump_traceback(all_threads=True)
    print(f"serve_cluster_test: still running after {HARD_LIMIT_S} s; stopping the cluster",
          flush=True)
    cluster = getattr(ServeClusterTest, "cluster", None)

    def stop():
        import ray
        ray.shutdown()  # the driver first: Cluster refuses to remove the node it is on
        if cluster is not None:
            cluster.shutdown()
        shutil.rmtree(getattr(ServeClusterTest, "tmp", "/nonexistent"), ignore_errors=True)

    t = threading.Thread(target=stop, daemon=True)
    t.start()
    t.join(30)
    os._exit(1)


if __name__ == "__main__":
    torch.set_num_threads(1)
    watchdog = threading.Timer(HARD_LIMIT_S, _watchdog)
    watchdog.daemon = True
    watchdog.start()
    faulthandler.dump_traceback_later(HARD_LIMIT_S + 60, exit=True)  # if the watchdog hangs
    junit.main("serve_cluster_test")
