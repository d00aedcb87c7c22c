"""`collage optimize --workers ray` on a real Ray cluster of this machine (registered by
tests/CMakeLists.txt where scripts/install_ray.sh made BUILD/rayenv, run by its Python):

  1. without Ray for the dispatcher's Python: a clear error, a non-zero exit;
  2. a head (no collage resource) and 2 worker nodes offering this machine's device resource
     measure a model's candidates, recording the same keys valid and invalid as the local
     worker (crashing, aborting and hanging plug-ins among the backends);
  3. one of the 2 nodes killed (SIGKILL, every process of it) mid-way: the optimize finishes
     on the other, every candidate recorded, the same keys valid and invalid;
  4. no node offering the resource: a clear error, a non-zero exit.

    python ray_workers_test.py --collage BUILD/collage --plugins BUILD/test_plugins
"""

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

from ray_cluster import Cluster

failures = []


def check(condition, what, detail=""):
    print(("ok    " if condition else "FAIL  ") + what, flush=True)
    if not condition:
        failures.append(what)
        if detail:
            print("      " + detail.replace("\n", "\n      ")[-4000:], flush=True)


# Probes measured in the optimizing process whichever the workers (src/cost/cost_model.cc),
# and chosen by the measured costs: which of them exist depends on timings.
LOCAL_PROBES = ("library-switch", "step-in-run")


def recorded(db):
    """{(backend, signature, threads, method): valid} of the finished rows measured by the
    workers: the candidates and the layout conversions."""
    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT backend, signature, threads, method, state FROM costs "
                         "WHERE state IN ('valid', 'invalid') AND backend NOT IN (?, ?)",
                         LOCAL_PROBES).fetchall()
    return {row[:4]: row[4] == "valid" for row in rows}


def unfinished(db):
    with sqlite3.connect(db) as c:
        return c.execute("SELECT count(*) FROM costs WHERE state = 'measuring'").fetchone()[0]


def same_records(a, b, what):
    ra, rb = recorded(a), recorded(b)
    invalid = sum(1 for v in rb.values() if not v)
    detail = ""
    if ra != rb:
        only_a = {k: v for k, v in ra.items() if rb.get(k) != v}
        only_b = {k: v for k, v in rb.items() if ra.get(k) != v}
        detail = f"differ: ray {sorted(only_a.items())[:5]}\nlocal {sorted(only_b.items())[:5]}"
    check(ra == rb and invalid > 0 and unfinished(a) == 0,
          f"{what}: {len(ra)} candidates and conversions, the same valid and invalid as the "
          f"local worker ({invalid} invalid)", detail)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--collage", required=True)
    parser.add_argument("--plugins", required=True, help="the test plug-ins' folder")
    args = parser.parse_args()
    python = sys.executable  # this Ray's
    ray = os.path.join(os.path.dirname(python), "ray")
    work = tempfile.mkdtemp(prefix="cray")  # short: Ray's socket paths have a length limit
    cluster = Cluster(ray, work)
    started = time.time()
    try:
        model = os.path.join(work, "dcgan.onnx")
        subprocess.run([args.collage, "zoo", "export", "dcgan", "-o", model], check=True,
                       capture_output=True)
        resources = subprocess.run([args.collage, "ray", "resources"], check=True,
                                   capture_output=True, text=True)
        resource = next(iter(json.loads(resources.stdout)))
        check(resource.startswith("collage-device-") and "fingerprint" in resources.stderr,
              f"collage ray resources: {resources.stdout.strip()}")

        # Every backend, and plug-ins that segfault, abort and hang on Relu: invalid records
        # of each kind, the hang's after --measure-timeout.
        flags = ["--threads", "1", "--no-compare", "--calibrate", "0", "--measure-timeout", "2"]
        for name in ("segfaulting", "aborting", "hanging"):
            flags += ["--backend-path", os.path.join(args.plugins, name)]
        base_env = dict(os.environ, RAY_ADDRESS=cluster.address, COLLAGE_RAY_PYTHON=python)

        def optimize(db, workers=None, env=None, wait=True):
            command = [args.collage, "optimize", model, "--cost-db", db] + flags
            if workers:
                command += ["--workers", workers]
            process = subprocess.Popen(command, env=env or base_env, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True)
            if not wait:
                return process
            out, err = process.communicate(timeout=300)
            return process.returncode, out, err

        # 1. No Ray for that Python: said, before anything is measured.
        code, _, err = optimize(os.path.join(work, "none.sqlite"), "ray",
                                env=dict(base_env, COLLAGE_RAY_PYTHON="/usr/bin/python3"))
        check(code != 0 and "cannot import ray" in err and "pip install ray==2.60.0" in err
              and "/usr/bin/python3" in err, "without Ray: a clear error, non-zero exit", err)

        cluster.start()
        # One after the other: nodes started together on one machine may fail to join.
        for count, name in enumerate(("node1", "node2"), 1):
            cluster.start_node(name, ["--address", cluster.address, "--num-cpus", "0",
                                      "--resources", resources.stdout.strip()])
            check(cluster.wait_for(python, resource, count), f"{name} offers the resource")

        local = os.path.join(work, "local.sqlite")
        t = time.time()
        code, _, err = optimize(local)
        check(code == 0, f"the local worker's optimize ({time.time() - t:.0f} s)", err)

        # 2. Two nodes measure.
        both = os.path.join(work, "ray.sqlite")
        t = time.time()
        code, _, err = optimize(both, "ray")
        check(code == 0, f"optimize --workers ray on 2 nodes ({time.time() - t:.0f} s)", err)
        same_records(both, local, "2 nodes")

        # 3. A node killed mid-way: its task goes to the other node.
        killed = os.path.join(work, "killed.sqlite")
        t = time.time()
        process = optimize(killed, "ray", wait=False)
        done_before = 0
        while process.poll() is None and time.time() - t < 120:
            time.sleep(0.5)
            try:
                done_before = len(recorded(killed))
            except sqlite3.Error:
                continue  # not made yet
            # Killed while it measures: its relay runs (it stays up between tasks, so the
            # node has measured; a node measures every other job or so).
            if done_before >= 20 and cluster.runs("node2", "--relay"):
                cluster.kill("node2")
                break
        out, err = process.communicate(timeout=300)
        check(done_before >= 20 and "node2" not in cluster.nodes,
              f"node2 killed after {done_before} records")
        check(process.returncode == 0,
              f"optimize --workers ray with a node killed ({time.time() - t:.0f} s)", err)
        same_records(killed, local, "a node killed mid-way")

        # 4. No node offers the resource (the head does not): said after the grace.
        cluster.kill("node1")
        check(cluster.wait_for(python, resource, 0), "the nodes are gone")
        t = time.time()
        code, _, err = optimize(os.path.join(work, "nonode.sqlite"), "ray")
        check(code != 0 and "no alive node of the Ray cluster offers the resource " + resource
              in err, f"no node: a clear error, non-zero exit ({time.time() - t:.0f} s)", err)
    finally:
        cluster.stop()
        shutil.rmtree(work, ignore_errors=True)
    print(f"{len(failures)} failed, in {time.time() - started:.0f} s", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
