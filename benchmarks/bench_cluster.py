"""``digitise batch --scheduler`` on a local Dask cluster against ``--jobs`` on the same cores.

The pages of ``bench_batch.py`` (self-played matches, seeds 9800 up, medium
damage, 300-dpi PNG). Four runs of the real CLI, each pinned with
``taskset``: ``--jobs 1`` on core 0, a cluster of one worker process on core
0, ``--jobs 2`` on cores 0-1, a cluster of two on cores 0-1. A cluster (``dask
scheduler`` and ``dask worker --nworkers N --nthreads 1``, as
docs/distributed.md starts them) is started afresh for each run, before its
clock starts: the premise is a cluster already running; its workers load
digitise's models at their first match, as local worker processes do. CPU
time is of every process (the scheduler's and workers' too, while the batch
runs). The cluster runs with docs/distributed.md's settings (:data:`QUIET`),
or Dask's defaults (``--dask-defaults``). Target: the cluster costs at most
10 % over local processes on the same cores.

    .venv/bin/python benchmarks/bench_cluster.py --matches 16
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

# Sibling scripts, not a package: found through sys.path above.
from bench_batch import children_cpu
from bench_end_to_end import adopt_orphans, reap_orphans, render, run_batch
from machine import describe as describe_host

BIN = Path(sys.executable).parent

#: The settings docs/distributed.md gives workers that only convert matches: no statistical profiler (it
#: samples the running match's stack every 10 ms), event-loop checks and monitors a second, not 20-500 ms.
QUIET = {
    "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False",
    "DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL": "1s",
    "DASK_DISTRIBUTED__ADMIN__SYSTEM_MONITOR__INTERVAL": "2s",
    "DASK_DISTRIBUTED__WORKER__MEMORY__MONITOR_INTERVAL": "1s",
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _pinned(cpus: str, command: list[str]) -> list[str]:
    return ["taskset", "-c", cpus, *command] if shutil.which("taskset") else command


def _start_cluster(workers: int, cpus: str, quiet: bool = True) -> tuple[str, list[subprocess.Popen[bytes]]]:
    """A scheduler and ``workers`` worker processes of one thread on ``cpus``; its address once all joined.
    ``quiet``: with :data:`QUIET`'s settings, else Dask's defaults."""
    address = f"tcp://127.0.0.1:{_free_port()}"
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(QUIET if quiet else {})}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env, "cwd": "/"}
    scheduler = subprocess.Popen(_pinned(cpus, [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port",
                                                address.rsplit(":", 1)[1], "--no-dashboard"]), **quiet)
    worker = subprocess.Popen(_pinned(cpus, [str(BIN / "dask"), "worker", address, "--nworkers", str(workers),
                                             "--nthreads", "1", "--no-dashboard"]), **quiet)
    from distributed import Client

    with Client(address, timeout=60) as client:
        client.wait_for_workers(workers, timeout=120)
    return address, [worker, scheduler]


def _stop(processes: Sequence[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _tree_cpu(processes: Sequence[subprocess.Popen[bytes]]) -> float:
    """CPU seconds so far of ``processes`` and all their descendants (the cluster's, while it runs)."""
    import psutil

    total = 0.0
    for process in processes:
        root = psutil.Process(process.pid)
        for each in (root, *root.children(recursive=True)):
            try:
                times = each.cpu_times()
            except psutil.NoSuchProcess:
                continue
            total += times.user + times.system
    return total


def _run_on_cluster(folder: Path, out: Path, workers: int, cpus: str, quiet: bool) -> tuple[float, int, str, float]:
    """(seconds, exit code, stderr, the cluster's CPU seconds while the batch ran)."""
    address, processes = _start_cluster(workers, cpus, quiet)
    try:
        shutil.rmtree(out, ignore_errors=True)
        command = _pinned(cpus, [sys.executable, "-m", "digitise.cli", "batch", str(folder), "-o", str(out),
                                 "--scheduler", address])
        cluster0, batch0 = _tree_cpu(processes), children_cpu()
        start = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - start
        # Only the batch process has ended (and been waited for) yet: the children's CPU is its own.
        cpu = _tree_cpu(processes) - cluster0 + children_cpu() - batch0
        return seconds, done.returncode, done.stderr, cpu
    finally:
        _stop(processes)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=16)
    parser.add_argument("--seed-start", type=int, default=9800)
    parser.add_argument("--work", type=Path, default=Path("/tmp/digitise-bench-cluster"))
    parser.add_argument("--repeat", type=int, default=1, help="runs of each setting (the best is kept)")
    parser.add_argument("--dask-defaults", action="store_true",
                        help="start the cluster with Dask's default settings, not docs/distributed.md's")
    args = parser.parse_args(argv)
    folder = args.work / "pages"
    pages = render(list(range(args.matches)), args.seed_start, "medium", folder, 300, "png", os.cpu_count() or 1)
    total = sum(pages.values())
    print(f"{len(pages)} matches, {total} pages (300-dpi PNG, medium damage) in {folder}", file=sys.stderr)
    adopt_orphans()
    settings = [("local", 1, "0"), ("cluster", 1, "0"), ("local", 2, "0,1"), ("cluster", 2, "0,1")]
    best: dict[tuple[str, int], tuple[float, float]] = {}
    for _ in range(args.repeat):
        # Interleaved, so that a neighbour's load falls on both ways alike.
        for how, n, cpus in settings:
            reap_orphans()
            out = args.work / f"out-{how}-{n}"
            if how == "local":
                cpu0 = children_cpu()
                seconds, code, stderr = run_batch(folder, out, n, cpus)
                reap_orphans()
                cpu = children_cpu() - cpu0
            else:
                # The batch process's own CPU, and the cluster's while the batch ran (not its start and end).
                seconds, code, stderr, cpu = _run_on_cluster(folder, out, n, cpus, not args.dask_defaults)
                reap_orphans()
            if code not in (0, 1):
                print(f"{how} {n}: exit {code}\n{stderr[-2000:]}", file=sys.stderr)
            print(f"{how} {n}: {seconds:.1f} s, {cpu:.1f} s CPU", file=sys.stderr)
            if (how, n) not in best or seconds < best[(how, n)][0]:
                best[(how, n)] = (seconds, cpu)
    same = all((args.work / "out-local-2" / "summary.json").read_bytes()
               == (args.work / f"out-{how}-{n}" / "summary.json").read_bytes() for how, n, _ in settings)
    print(f"\n{describe_host()}")
    print(f"cluster settings: {'Dask defaults' if args.dask_defaults else ', '.join(f'{k}={v}' for k, v in QUIET.items())}")
    print("\n| run | pages | wall s | pages/s | CPU s (all processes) |\n|---|---|---|---|---|")
    for how, n, cpus in settings:
        seconds, cpu = best[(how, n)]
        name = f"batch --jobs {n}" if how == "local" else f"cluster of {n} worker{'s' if n > 1 else ''}, --scheduler"
        print(f"| `taskset -c {cpus}` {name} | {total} | {seconds:.1f} | {total / seconds:.2f} | {cpu:.1f} |")
    for n in (1, 2):
        wall = best[("cluster", n)][0] / best[("local", n)][0] - 1
        cpu = best[("cluster", n)][1] / best[("local", n)][1] - 1
        print(f"\n{n} core{'s' if n > 1 else ''}: the cluster costs {wall:+.1%} wall time, {cpu:+.1%} CPU over "
              "local processes (target <= +10 %)")
    print(f"\nsummary.json the same in all four runs: {same}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
