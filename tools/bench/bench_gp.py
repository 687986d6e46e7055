#!/usr/bin/python3
"""GP fitting and prediction: advbo's BO core vs scikit-learn, on identical data, kernel,
bounds, starting point and number of restarts, in the same run.

For each n in {100, 500, 2000} and d in {2, 10, 50}:
  * data: X ~ U[0,1]^d, y = sum_j a_j sin(2 pi w_j x_j + c_j) + 0.1 eps, standardised;
    10,000 test points from the same distribution;
  * model: C * Matern(nu=5/2, ARD) + White, all hyperparameters fitted by maximum marginal
    likelihood, bounds C in [1e-2, 1e2], lengthscales in [1e-2, 1e2], noise in [1e-6, 1],
    start C=1, l=1, noise=1e-2, plus R random restarts (uniform in log-bounds), L-BFGS-B;
  * advbo: tools/bench_gp (build/tools/bench_gp); scikit-learn: GaussianProcessRegressor
    (normalize_y=False, n_restarts_optimizer=R), each in its own process with a time limit;
  * reported: fit seconds, prediction seconds (mean and std at 10,000 points), the log
    marginal likelihood each reached, and two cross-checks: scikit-learn's LML evaluated at
    advbo's hyperparameters (must equal advbo's LML) and the largest difference between
    advbo's predictions and scikit-learn's predictions at advbo's hyperparameters.

Appends to tools/results/gp_benchmark.jsonl (one line per configuration, as each finishes)
and rewrites tools/results/gp_benchmark.md (table of every line in the JSONL file).

Usage: tools/bench/bench_gp.py [--restarts 2] [--sizes 100,500,2000] [--dims 2,10,50]
                         [--timeout 1200] [--blas-dir DIR] [--out-prefix tools/results/gp_benchmark]
--blas-dir runs the scikit-learn side with LD_LIBRARY_PATH=DIR (e.g. OpenBLAS's
/usr/lib/x86_64-linux-gnu/openblas-pthread) instead of the system's default BLAS.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def make_data(n, d, m, seed):
    rng = np.random.default_rng(seed)
    a = 1.0 / np.arange(1, d + 1)  # decreasing relevance: ARD matters
    w = rng.uniform(0.5, 2.0, d)
    c = rng.uniform(0, 2 * np.pi, d)
    f = lambda x: (a * np.sin(2 * np.pi * w * x + c)).sum(axis=1)
    x = rng.uniform(0, 1, (n, d))
    y = f(x) + 0.1 * rng.standard_normal(n)
    mu, sd = y.mean(), y.std()
    xs = rng.uniform(0, 1, (m, d))
    return x, (y - mu) / sd, xs


def sklearn_kernel(d, theta=None):
    from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel
    k = ConstantKernel(1.0, (1e-2, 1e2)) * Matern(np.ones(d), (1e-2, 1e2), nu=2.5) + \
        WhiteKernel(1e-2, (1e-6, 1.0))
    if theta is not None:
        k = k.clone_with_theta(theta)
    return k


def advbo_to_sklearn_theta(theta, d):
    # advbo: [log l_1..l_d, log s2, log noise]; sklearn: [log C, log l_1..l_d, log noise]
    return np.concatenate([[theta[d]], theta[:d], [theta[d + 1]]])


def sklearn_worker(args):
    """Runs in a child process: fits, predicts and cross-checks; prints one JSON line."""
    from sklearn.gaussian_process import GaussianProcessRegressor
    d = args.d
    data = np.load(args.npz)
    x, y, xs = data["x"], data["y"], data["xs"]
    gp = GaussianProcessRegressor(sklearn_kernel(d), normalize_y=False,
                                  n_restarts_optimizer=args.restarts,
                                  random_state=args.seed)
    t0 = time.perf_counter()
    gp.fit(x, y)
    fit_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    gp.predict(xs, return_std=True)
    pred_s = time.perf_counter() - t1
    out = {"fit_seconds": fit_s, "predict_seconds": pred_s,
           "log_marginal_likelihood": float(gp.log_marginal_likelihood_value_),
           "theta": gp.kernel_.theta.tolist()}
    if args.advbo_theta:
        th = advbo_to_sklearn_theta(np.array(json.loads(args.advbo_theta)), d)
        out["lml_at_advbo_theta"] = float(gp.log_marginal_likelihood(th))
        fixed = GaussianProcessRegressor(sklearn_kernel(d, th), normalize_y=False, optimizer=None)
        fixed.fit(x, y)
        m, s = fixed.predict(xs, return_std=True)
        # scikit-learn's std includes the WhiteKernel noise; advbo's is the latent f's.
        s = np.sqrt(np.maximum(s ** 2 - np.exp(th[-1]), 0.0))
        pred = np.fromfile(args.pred, dtype=np.float64).reshape(2, -1)
        out["max_abs_diff_mean"] = float(np.abs(pred[0] - m).max())
        out["max_abs_diff_std"] = float(np.abs(pred[1] - s).max())
    print(json.dumps(out))


def run(cmd, timeout, env=None):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    if p.returncode != 0:
        return None, p.stderr.strip()[-400:]
    return json.loads(p.stdout.strip().splitlines()[-1]), None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--restarts", type=int, default=2)
    ap.add_argument("--sizes", default="100,500,2000")
    ap.add_argument("--dims", default="2,10,50")
    ap.add_argument("--test-points", type=int, default=10000)
    ap.add_argument("--timeout", type=float, default=1200.0, help="seconds per fit and side")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--blas-dir", default="")
    ap.add_argument("--out-prefix", default=os.path.join(ROOT, "tools", "results", "gp_benchmark"))
    default_bin = os.path.join(ROOT, "build", "tools", "bench_gp")
    ap.add_argument("--bench-bin", default=default_bin)
    ap.add_argument("--table", metavar="RECORDS", help="print the table of these records and exit")
    # worker mode
    ap.add_argument("--sklearn-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--npz", help=argparse.SUPPRESS)
    ap.add_argument("--pred", help=argparse.SUPPRESS)
    ap.add_argument("--d", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--advbo-theta", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.table:  # the table of committed records (plain or .jsonl.gz), nothing run
        sys.path.insert(0, os.path.join(ROOT, "tools"))
        from report_util import open_text
        with open_text(args.table) as f:
            print("\n".join(table_lines([json.loads(line) for line in f if line.strip()])))
        return None
    if args.sklearn_worker:
        return sklearn_worker(args)
    if not os.path.exists(args.bench_bin) and args.bench_bin == default_bin:
        # The drivers are built on demand (not by tools/setup.sh's default build).
        subprocess.run(["cmake", "--build", os.path.join(ROOT, "build"), "--target", "bench_gp"],
                       check=False, stdout=sys.stderr)
    if not os.path.exists(args.bench_bin):
        sys.exit(f"bench_gp: {args.bench_bin} not found; run bash tools/setup.sh, then "
                 f"cmake --build build --target bench_gp")
    import sklearn
    env = dict(os.environ)
    if args.blas_dir:
        env["LD_LIBRARY_PATH"] = args.blas_dir
    jsonl = args.out_prefix + ".jsonl"
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(v) for v in args.sizes.split(",")]:
            for d in [int(v) for v in args.dims.split(",")]:
                x, y, xs = make_data(n, d, args.test_points, args.seed + 1000 * n + d)
                train, test, pred = (os.path.join(tmp, f) for f in ("train.bin", "test.bin", "pred.bin"))
                np.concatenate([x.ravel(), y]).astype("<f8").tofile(train)
                xs.astype("<f8").tofile(test)
                npz = os.path.join(tmp, "data.npz")
                np.savez(npz, x=x, y=y, xs=xs)
                ours, err_o = run([args.bench_bin, str(n), str(d), str(args.test_points), train, test,
                                   str(args.restarts), str(args.seed), pred], args.timeout)
                sk_cmd = [sys.executable, os.path.abspath(__file__), "--sklearn-worker", "--npz", npz,
                          "--pred", pred, "--d", str(d), "--restarts", str(args.restarts),
                          "--seed", str(args.seed)]
                if ours:
                    sk_cmd += ["--advbo-theta", json.dumps(ours["theta"])]
                sk, err_s = run(sk_cmd, args.timeout, env)
                row = {"n": n, "d": d, "restarts": args.restarts, "test_points": args.test_points,
                       "seed": args.seed, "advbo": ours, "advbo_error": err_o, "sklearn": sk,
                       "sklearn_error": err_s, "timeout_seconds": args.timeout,
                       "sklearn_version": sklearn.__version__, "numpy_version": np.__version__,
                       "blas": args.blas_dir or "system default (/etc/alternatives/libblas.so.3)",
                       "machine": platform.processor() or platform.machine(), "cores": os.cpu_count()}
                if ours and sk:
                    row["fit_speedup"] = sk["fit_seconds"] / ours["fit_seconds"]
                    row["predict_speedup"] = sk["predict_seconds"] / ours["predict_seconds"]
                    row["lml_advbo_minus_sklearn"] = ours["log_marginal_likelihood"] - sk["log_marginal_likelihood"]
                rows.append(row)
                with open(jsonl, "a") as f:
                    f.write(json.dumps(row) + "\n")
                print(summary_line(row), flush=True)
    # The table covers every configuration in the JSONL file (earlier invocations included).
    with open(jsonl) as f:
        write_table(args.out_prefix + ".md", [json.loads(l) for l in f], args)


def fmt(v, p=2):
    return "-" if v is None else f"{v:.{p}f}"


def summary_line(r):
    o, s = r["advbo"] or {}, r["sklearn"] or {}
    sk_fit = fmt(s.get("fit_seconds")) if s else f">{r['timeout_seconds']:.0f} ({r['sklearn_error']})"
    return (f"n={r['n']:5d} d={r['d']:3d} | fit advbo {fmt(o.get('fit_seconds'))} s, sklearn {sk_fit} s"
            f" | LML advbo {fmt(o.get('log_marginal_likelihood'))} sklearn {fmt(s.get('log_marginal_likelihood'))}"
            f" | predict advbo {fmt(o.get('predict_seconds'), 3)} s sklearn {fmt(s.get('predict_seconds'), 3)} s")


def write_table(path, rows, args):
    with open(path, "w") as f:
        f.write("\n".join(table_lines(rows)) + "\n")


def table_lines(rows):
    lines = ["| n | d | advbo fit (s) | sklearn fit (s) | fit speed-up | advbo LML | sklearn LML | "
             "advbo predict 10k (s) | sklearn predict 10k (s) | predict speed-up | "
             "check: sklearn LML at advbo θ | check: max |Δmean|, |Δstd| |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        o, s = r["advbo"] or {}, r["sklearn"] or {}
        if s:
            sk_fit, sk_pred = fmt(s["fit_seconds"]), fmt(s["predict_seconds"], 3)
            speed = f"{r['fit_speedup']:.1f}×" if o else "-"
            pspeed = f"{r['predict_speedup']:.1f}×" if o else "-"
        else:
            sk_fit, sk_pred = f"> {r['timeout_seconds']:.0f} ({r['sklearn_error']})", "-"
            speed = f"> {r['timeout_seconds'] / o['fit_seconds']:.1f}×" if o else "-"
            pspeed = "-"
        chk = fmt(s.get("lml_at_advbo_theta")) if s else "-"
        diff = (f"{s['max_abs_diff_mean']:.1e}, {s['max_abs_diff_std']:.1e}"
                if s and "max_abs_diff_mean" in s else "-")
        lines.append(f"| {r['n']} | {r['d']} | {fmt(o.get('fit_seconds'))} | {sk_fit} | {speed} | "
                     f"{fmt(o.get('log_marginal_likelihood'))} | {fmt(s.get('log_marginal_likelihood'))} | "
                     f"{fmt(o.get('predict_seconds'), 3)} | {sk_pred} | {pspeed} | {chk} | {diff} |")
    return lines


if __name__ == "__main__":
    main()
