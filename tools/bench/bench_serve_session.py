#!/usr/bin/env python3
"""A served game defender's cost as one client session grows.

For each --defense spec (side by side, the same request sequence): starts
`advbo serve --model M --defense SPEC`, sends --requests single-image requests in ONE
session (X-Advbo-Session headers, as advbo's own clients send them), and records each
request's wall time and the server's resident memory (VmRSS) every --rss-every requests.
The images are the test image --index plus uniform noise in [-eps, eps] on the 8-bit grid,
drawn from --seed, so every spec sees exactly the same queries.

Writes OUT/latency.jsonl (one line per spec: per-request milliseconds and RSS samples) and
OUT/report.md (mean latency of the first and last 100 requests, their ratio, RSS after the
first 100 and at the end). Goal of ratio <= 2, RSS flat within 10 %.

Usage: /usr/bin/python3 tools/bench/bench_serve_session.py --out DIR \\
           --defense r2b2:jpeg+noise --defense r2b2:jpeg+noise:window=100 [--requests 5000]
"""
import argparse
import http.client
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from train_models import read_idx  # noqa: E402


def read_mnist(index):
    """Test image `index` [1, 28, 28] in [0, 1] and its label, from the shipped sample."""
    images = read_idx(str(ROOT / "data/mnist/t10k-images-idx3-ubyte.gz"))
    labels = read_idx(str(ROOT / "data/mnist/t10k-labels-idx1-ubyte.gz"))
    if not 0 <= index < len(images):
        sys.exit(f"--index {index}: the shipped MNIST sample has {len(images)} images")
    return (images[index][None] / 255.0).astype(np.float32), int(labels[index])


def rss_mb(pid):
    """Resident set size of process `pid` in MB (VmRSS of /proc/PID/status)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    raise RuntimeError(f"no VmRSS for pid {pid}")


def start_server(advbo, model, defense, requests, tmp):
    """Starts `advbo serve`; returns (process, port)."""
    port_file = Path(tmp) / "port"
    port_file.unlink(missing_ok=True)
    log = open(Path(tmp) / "serve.log", "w")
    proc = subprocess.Popen(
        [advbo, "serve", "--model", model, "--defense", defense, "--port", "0",
         "--port-file", str(port_file), "--torch-threads", "1",
         "--max-session-queries", str(requests)], stdout=log, stderr=log)
    for _ in range(600):
        if port_file.exists() and port_file.read_text().strip():
            return proc, int(port_file.read_text())
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.kill()
    sys.exit(f"advbo serve --defense {defense} did not start:\n"
             + (Path(tmp) / "serve.log").read_text())


def run_session(advbo, model, defense, queries, label, rss_every, tmp):
    """One session of len(queries) requests; returns per-request ms and RSS samples."""
    proc, port = start_server(advbo, model, defense, len(queries), tmp)
    headers = {"Content-Type": "application/octet-stream", "X-Advbo-Shape": "1,1,28,28",
               "X-Advbo-Session": "bench", "X-Advbo-Defense-Seed": "0",
               "X-Advbo-True-Class": str(label), "X-Advbo-Target": "-1"}
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    ms, rss = [], []
    try:
        for i, x in enumerate(queries):
            t0 = time.perf_counter()
            conn.request("POST", "/predict", body=x.tobytes(), headers=headers)
            reply = conn.getresponse()
            body = reply.read()
            ms.append(1000.0 * (time.perf_counter() - t0))
            if reply.status != 200:
                sys.exit(f"{defense}: request {i + 1}: HTTP {reply.status}: {body[:300]!r}")
            if (i + 1) % rss_every == 0 or i + 1 == len(queries):
                rss.append([i + 1, rss_mb(proc.pid)])
            if (i + 1) % 500 == 0:
                print(f"{defense}: {i + 1}/{len(queries)} requests, last 100 mean "
                      f"{np.mean(ms[-100:]):.1f} ms, RSS {rss[-1][1]:.0f} MB", file=sys.stderr)
    finally:
        conn.close()
        proc.terminate()
        proc.wait(timeout=30)
    return ms, rss


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--defense", action="append", required=True,
                    help="served defense spec (repeat to compare side by side)")
    ap.add_argument("--requests", type=int, default=5000, help="requests in the session")
    ap.add_argument("--model", default=str(ROOT / "models/mnist_cw.pt"))
    ap.add_argument("--advbo", default=str(ROOT / "build/advbo"))
    ap.add_argument("--index", type=int, default=0, help="MNIST test image")
    ap.add_argument("--eps", type=float, default=0.3, help="L_inf radius of the noise")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rss-every", type=int, default=100)
    a = ap.parse_args()
    if a.requests < 200:
        sys.exit("--requests must be >= 200 (first and last 100 are compared)")
    if not 0 < a.eps <= 1:
        sys.exit("--eps must be in (0, 1]")
    img, label = read_mnist(a.index)
    rng = np.random.default_rng(a.seed)
    queries = [np.clip(np.round((img + rng.uniform(-a.eps, a.eps, img.shape)) * 255) / 255,
                       0, 1).astype(np.float32) for _ in range(a.requests)]
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp, open(out / "latency.jsonl.partial", "w") as f:
        for spec in a.defense:
            ms, rss = run_session(a.advbo, a.model, spec, queries, label, a.rss_every, tmp)
            first, last = float(np.mean(ms[:100])), float(np.mean(ms[-100:]))
            rss_first = next(r for n, r in rss if n >= 100)
            row = {"defense": spec, "requests": a.requests, "seed": a.seed, "index": a.index,
                   "eps": a.eps, "first100_ms": first, "last100_ms": last,
                   "ratio": last / first, "rss_after_100_mb": rss_first,
                   "rss_end_mb": rss[-1][1], "rss_change": rss[-1][1] / rss_first - 1,
                   "ms": ms, "rss": rss}
            f.write(json.dumps(row) + "\n")
            f.flush()
            rows.append(row)
    os.replace(out / "latency.jsonl.partial", out / "latency.jsonl")
    lines = [f"One session of {a.requests} single-image requests (MNIST test image {a.index} + "
             f"uniform noise in ±{a.eps}, seed {a.seed}) against `advbo serve --model "
             f"{Path(a.model).name} --torch-threads 1`:", "",
             "| defense | first 100 mean ms | last 100 mean ms | ratio | RSS after 100 MB | "
             "RSS at end MB | RSS change |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| `{r['defense']}` | {r['first100_ms']:.2f} | {r['last100_ms']:.2f} | "
                     f"{r['ratio']:.2f} | {r['rss_after_100_mb']:.0f} | {r['rss_end_mb']:.0f} | "
                     f"{100 * r['rss_change']:+.1f} % |")
    (out / "report.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
