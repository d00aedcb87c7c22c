#!/usr/bin/env python3
"""Measures collage's candidates on the nodes of a Ray cluster (src/cost/ray_measurer.h).

Started by `collage optimize --workers ray|ray://HOST:PORT`, never by hand:

    PYTHON collage_ray_dispatch.py --address auto|ray://HOST:PORT --worker PATH
        --resource NAME --timeout S [--device TEXT] [--parent-pid PID] [--plugin PATH]...

It speaks the dispatcher envelope of src/cost/dispatch_protocol.h on stdin and stdout (u32
little-endian length, then the payload; the first byte is the kind) and reads only that
envelope: what a job asks and what it answers are the measurement worker's own payloads,
passed through untouched. Each job becomes one Ray task, placed on a node that offers the
custom resource NAME (machines whose device fingerprint is the optimizing machine's: they
measure as it would), one task at a time per node so that measurements on one node do not
disturb each other's timings. The task hands the job to `collage_measure_worker --relay`,
kept alive in each Ray worker process: a candidate that crashes or hangs kills the relay's
own worker, never the relay, and comes back as an invalid record by the C++ rules. A node
that dies loses its tasks, which Ray runs again on another node (max_retries).

stdout carries frames only: Ray's logs go to stderr.
"""

import argparse
import logging
import os
import queue
import struct
import subprocess
import sys
import tempfile
import threading
import time

# Frame kinds (src/cost/worker_protocol.h, src/cost/dispatch_protocol.h).
JOB, JOB_DONE, JOB_LOST, NODES, FATAL = b"J", b"D", b"L", b"N", b"X"

# How long jobs may wait with no alive node offering the resource before the dispatcher
# gives up: long enough for a node to restart, short enough that an optimize whose fleet is
# gone says so.
NO_NODE_GRACE_S = 30.0
# How often the nodes are counted while jobs wait.
NODE_POLL_S = 1.0
# Node failures a job's task survives (Ray sends it to another node each time).
TASK_RETRIES = 4
# The largest frame a relay may send (src/cost/worker_protocol.h, kMaxWorkerFrameBytes).
MAX_FRAME_BYTES = 1 << 30


def read_exactly(stream, size):
    """`size` bytes, or None at end of file before the first; an error inside a frame."""
    chunks, got = [], 0
    while got < size:
        chunk = stream.read(size - got)
        if not chunk:
            if got == 0:
                return None
            raise EOFError("the pipe closed inside a frame")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def read_frame(stream):
    """One frame's payload; None at a clean end of file."""
    header = read_exactly(stream, 4)
    if header is None:
        return None
    (size,) = struct.unpack("<I", header)
    if size == 0 or size > MAX_FRAME_BYTES:
        raise ValueError(f"a frame of {size} bytes")
    payload = read_exactly(stream, size)
    if payload is None:
        raise EOFError("the pipe closed inside a frame")
    return payload


def write_frame(stream, payload):
    stream.write(struct.pack("<I", len(payload)) + payload)
    stream.flush()


def text_field(text):
    data = text.encode("utf-8", "replace")
    return struct.pack("<I", len(data)) + data


# --- the Ray task's side: runs in Ray worker processes on the nodes -----------------------

# The relay of this Ray worker process, started by its first task and kept for the next
# ones (a new one costs a process and the backends' loading). Mutated, never rebound: it
# travels with the task function to the worker.
_RELAY = {}


class RelayLost(Exception):
    """The relay was killed from outside (a signal): the task is worth sending again."""


def _relay_environment():
    env = dict(os.environ)
    # Ray sets OMP_NUM_THREADS=1 in its workers for tasks that take no CPU; the measurement
    # sets its own thread count per request, and a library reading the variable at start
    # (OpenBLAS, MKL) must not be held to one thread by it.
    env.pop("OMP_NUM_THREADS", None)
    return env


def _stop_relay():
    process = _RELAY.pop("process", None)
    if process is not None:
        process.kill()
        process.wait()
    _RELAY.pop("key", None)


def _start_relay(worker, plugins, timeout):
    """Starts the relay; returns its hello payload, or raises RuntimeError with its words."""
    _stop_relay()
    command = [worker, "--relay", "--timeout", repr(timeout), "--parent-pid", str(os.getpid())]
    for plugin in plugins:
        command += ["--plugin", plugin]
    errors = tempfile.TemporaryFile()  # never a pipe nobody reads
    try:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=errors, env=_relay_environment())
    except OSError as error:
        raise RuntimeError(f"cannot start {worker} on this node: {error}") from None
    hello = read_frame(process.stdout)
    if hello is None:
        code = process.wait()
        errors.seek(0)
        said = errors.read().decode("utf-8", "replace").strip()[-1000:]
        raise RuntimeError(f"{worker} --relay ended before its hello (status {code}): {said}")
    _RELAY.update(process=process, key=(worker, tuple(plugins), timeout), errors=errors,
                  hello=hello)
    return hello


def _ensure_relay(worker, plugins, timeout):
    process = _RELAY.get("process")
    if process is None or process.poll() is not None or _RELAY.get("key") != (
            worker, tuple(plugins), timeout):
        _start_relay(worker, plugins, timeout)
    return _RELAY["process"]


def task(worker, plugins, timeout, request):
    """One task for both uses, so that they share _RELAY (each remote function travels to
    the worker with globals of its own): with `request` None, ("hello", the relay's hello
    payload); else ("done", its full record payload). ("failed", why) when the relay cannot
    be started or gives up; RelayLost, to be retried, when it was killed."""
    try:
        process = _ensure_relay(worker, plugins, timeout)
    except RuntimeError as error:
        return ("failed", str(error))
    if request is None:
        return ("hello", _RELAY["hello"])
    try:
        write_frame(process.stdin, request)
        reply = read_frame(process.stdout)
    except (BrokenPipeError, EOFError, ValueError):
        reply = None
    if reply is not None:
        return ("done", reply)
    code = process.wait()
    _RELAY.clear()
    if code < 0:
        raise RelayLost(f"the relay on this node died of signal {-code}")
    return ("failed", f"the relay on this node exited with status {code} while measuring")


# --- the dispatcher's side: the driver process ---------------------------------------------


class Dispatcher:
    def __init__(self, args, ray, frames):
        self.args = args
        self.ray = ray
        self.frames = frames
        self.jobs = queue.Queue()
        self.pending = {}  # ObjectRef -> job id
        self.nodes = -1
        self.no_node_since = None
        self.next_node_poll = 0.0
        # retry_exceptions: only RelayLost is raised on purpose; everything else is an answer.
        self.task = ray.remote(num_cpus=0, resources={args.resource: 1},
                               max_retries=TASK_RETRIES, retry_exceptions=True)(task)

    def fatal(self, why):
        try:
            write_frame(self.frames, FATAL + text_field(why))
        finally:
            os._exit(3)

    def count_nodes(self):
        return sum(1 for node in self.ray.nodes()
                   if node.get("Alive") and node.get("Resources", {}).get(self.args.resource, 0) >= 1)

    def no_node_message(self):
        device = f" (this machine's device: {self.args.device})" if self.args.device else ""
        return (f"no alive node of the Ray cluster offers the resource {self.args.resource} for "
                f"{NO_NODE_GRACE_S:g} s{device}: start nodes on machines like this one with "
                f"`ray start --address HEAD --resources \"$(collage ray resources)\"`")

    def poll_nodes(self, waiting):
        """Says the node count when it changes; gives up after NO_NODE_GRACE_S without one
        while `waiting`."""
        now = time.monotonic()
        if now < self.next_node_poll:
            return
        self.next_node_poll = now + NODE_POLL_S
        count = self.count_nodes()
        if count != self.nodes:
            self.nodes = count
            write_frame(self.frames, NODES + struct.pack("<I", count))
        if count > 0 or not waiting:
            self.no_node_since = None
        elif self.no_node_since is None:
            self.no_node_since = now
        elif now - self.no_node_since > NO_NODE_GRACE_S:
            self.fatal(self.no_node_message())

    def start(self):
        """Forwards the hello of a relay on a matching node (its first task, kept)."""
        ref = self.task.remote(self.args.worker, self.args.plugin, self.args.timeout, None)
        limit = self.args.timeout + 60
        deadline = time.monotonic() + limit
        while not self.ray.wait([ref], timeout=NODE_POLL_S)[0]:
            if time.monotonic() > deadline:
                self.fatal(f"no Ray node started the measurement worker within {limit:g} s")
            self.poll_nodes(waiting=True)  # gives up after NO_NODE_GRACE_S without a node
        try:
            kind, payload = self.ray.get(ref)
        except Exception as error:  # noqa: BLE001 - any failure of the task is said
            kind, payload = "failed", f"{type(error).__name__}: {error}"
        if kind != "hello":
            self.fatal(f"the measurement worker could not start on a Ray node: {payload}")
        write_frame(self.frames, payload)
        self.next_node_poll = 0.0
        self.poll_nodes(waiting=False)

    def read_jobs(self, stdin):
        """The reader thread: jobs into the queue, then None at end of input."""
        try:
            while True:
                payload = read_frame(stdin)
                if payload is None:
                    break
                if payload[:1] != JOB or len(payload) < 6:
                    raise ValueError(f"not a job ({len(payload)} bytes)")
                (job,) = struct.unpack("<I", payload[1:5])
                self.jobs.put((job, payload[5:]))
        except (OSError, EOFError, ValueError) as error:
            self.jobs.put(error)
            return
        self.jobs.put(None)

    def take_jobs(self):
        """Submits the jobs that arrived; False at the end of input."""
        block = not self.pending
        while True:
            try:
                item = self.jobs.get(timeout=NODE_POLL_S) if block else self.jobs.get_nowait()
            except queue.Empty:
                return True
            block = False
            if item is None:
                return False
            if isinstance(item, Exception):
                self.fatal(f"cannot read the jobs from collage: {item}")
            job, request = item
            ref = self.task.remote(self.args.worker, self.args.plugin, self.args.timeout,
                                   request)
            self.pending[ref] = job

    def answer(self, ref):
        job = self.pending.pop(ref)
        try:
            kind, payload = self.ray.get(ref)
        except Exception as error:  # noqa: BLE001 - node deaths, retries exhausted
            why = f"{type(error).__name__} after {TASK_RETRIES} retries: {error}"
            write_frame(self.frames, JOB_LOST + struct.pack("<I", job) + text_field(why[:2000]))
            return
        if kind != "done":
            self.fatal(f"the measurement worker failed on a Ray node: {payload}")
        write_frame(self.frames, JOB_DONE + struct.pack("<I", job) + payload)

    def run(self, stdin):
        threading.Thread(target=self.read_jobs, args=(stdin,), daemon=True).start()
        while self.take_jobs():
            if self.pending:
                ready, _ = self.ray.wait(list(self.pending), num_returns=len(self.pending),
                                         timeout=0.2)
                for ref in ready:
                    self.answer(ref)
            self.poll_nodes(waiting=bool(self.pending))


def die_with_parent(parent_pid):
    """The dispatcher must not outlive collage (killed with SIGKILL) and hold Ray's nodes."""
    try:
        import ctypes
        import signal
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if parent_pid and os.getppid() != parent_pid:
        os._exit(3)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", required=True)
    parser.add_argument("--worker", required=True)
    parser.add_argument("--resource", required=True)
    parser.add_argument("--timeout", type=float, required=True)
    parser.add_argument("--device", default="")
    parser.add_argument("--parent-pid", type=int, default=0)
    parser.add_argument("--plugin", action="append", default=[])
    args = parser.parse_args()
    die_with_parent(args.parent_pid)
    # Frames get a private copy of stdout; anything printed (Ray's banners) goes to stderr.
    frames = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    stdin = os.fdopen(os.dup(0), "rb", buffering=0)

    def fatal(why):
        try:
            write_frame(frames, FATAL + text_field(why))
        finally:
            os._exit(3)

    try:
        import ray
    except ImportError as error:
        fatal(f"{sys.executable} cannot import ray ({error}): install it there "
              f"(pip install ray==2.60.0; scripts/install_ray.sh BUILD_DIR makes BUILD_DIR/rayenv) "
              f"or run the dispatcher with a Python that has it (COLLAGE_RAY_PYTHON)")
    address = args.address  # "auto" honours $RAY_ADDRESS
    try:
        ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING,
                 configure_logging=True)
    except Exception as error:  # noqa: BLE001 - Ray raises many kinds here
        where = os.environ.get("RAY_ADDRESS") or "this machine" if address == "auto" else address
        fatal(f"cannot connect to the Ray cluster of {where}: {type(error).__name__}: {error}")
    dispatcher = Dispatcher(args, ray, frames)
    dispatcher.start()
    dispatcher.run(stdin)
    ray.shutdown()


if __name__ == "__main__":
    main()
