#!/usr/bin/python3
"""Reliability campaign: feed the collage command line what a hostile or careless user would,
and count how each case ends.

    scripts/hostile_inputs.py                      # every family, about 5-10 minutes on 2 cores
    scripts/hostile_inputs.py --quick              # fewer cases per family, 1-2 minutes
    scripts/hostile_inputs.py --seed 7 --json r.json --build build --jobs 2
    scripts/hostile_inputs.py --family plans --only plans/conv/truncate-0100   # one case, kept

Each case runs `build/collage ...` in a fresh temporary folder (its cwd, holding every file the
case made) under an address-space limit (--mem, 4 GiB) and a time limit (--timeout, 30 s), and
is classified:

  clean          exit 1 or 2 with a line "error: ..." on stderr naming the file, flag or node
                 involved; or exit 0 where the input is valid and the output is right (checked
                 against an independent numpy evaluation wherever one can be computed)
  crash          killed by a signal (SIGSEGV, SIGABRT from std::terminate, ...)
  hang           still running at the time limit
  unclear        a non-zero exit without an "error:" line, an error that names nothing the case
                 is about, or a message carrying C++ internals ("basic_filebuf", "std::",
                 "what():"), a stack trace or unprintable bytes
  wrong          exit 0 but outputs that differ from the numpy reference (or are missing)
  accepted-bad   exit 0 on an input that must be refused (an output that cannot fit in
                 memory, an overflowing Range, a malformed model or a nonsense flag value)
  refused-valid  a clean error for an input that is valid and computable
  damage         a file outside the case's folder read into an output, a pre-existing file of
                 the user's deleted, modified or replaced (a symlink or device node replaced by
                 a regular file), a damaged cost database deleted instead of moved aside, or a
                 partial file left behind by a failed write

The exit status is 1 when any case crashed, hung, damaged something or answered wrongly
(wrong, accepted-bad); 0 otherwise.  Cases are deterministic for a given --seed and --quick.
Non-clean cases keep their folder (printed with the reproducing command) under the run folder.

Needs only Debian's python3 with python3-onnx and python3-numpy (apt-get install python3-onnx
python3-numpy); prlimit is not needed (the limits are set with setrlimit), mknod cases are
skipped when not root.
"""

import argparse
import concurrent.futures
import copy
import dataclasses
import hashlib
import json
import os
import random
import resource
import shlex
import shutil
import signal
import sqlite3
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import onnx
import onnx.numpy_helper as nh
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostile_models as hm  # noqa: E402

INT64_MAX, INT64_MIN = hm.INT64_MAX, hm.INT64_MIN
OUTCOMES = ["clean", "crash", "hang", "unclear", "wrong", "accepted-bad", "refused-valid",
            "damage"]
CLEAN_KINDS = ["refused", "ran-checked", "ran-unchecked"]
FATAL = {"crash", "hang", "damage", "wrong", "accepted-bad"}
FAMILIES = ["models", "attributes", "tensors", "plans", "costdb", "files", "cmdline"]

# Words in a message that betray a C++ exception or library internals reaching the user.
INTERNAL_WORDS = ["basic_filebuf", "std::", "what():", "terminate called", "Aborted",
                  "Segmentation fault", "stack trace", "Stack trace", "AddressSanitizer",
                  "runtime error:", "__cxa", "libc++abi", "Assertion", "assertion"]

# How every line collage writes on stderr starts: its messages, the progress bar, CLI11's hint.
EXPECTED_LINES = ("error: ", "warning: ", "measuring ", "searching ", "two-level ",
                  "generation ", "Run with --help", "note: ")

# The "secret" in every case's outside/ folder: bytes that must never show up in an output.
SECRET = (np.arange(512, dtype=np.float32) * 1.25 + 98765.0).tobytes()
IS_ROOT = os.geteuid() == 0


class Skip(Exception):
    """A case that cannot be set up here (mknod without root)."""


@dataclasses.dataclass
class Case:
    id: str
    argv: list                      # collage's arguments, run in the case's work/ folder
    files: dict = dataclasses.field(default_factory=dict)   # relative path -> bytes
    setup: object = None            # f(work, outside): FIFOs, symlinks, device nodes
    expect: str = "either"          # "refuse", "ok" (must run and be right) or "either"
    names: list = dataclasses.field(default_factory=list)   # an error must name one of these
    check: object = None            # f(work, result) -> None or why the exit-0 answer is wrong
    writes: list = dataclasses.field(default_factory=list)  # files the command may rewrite
    may_delete: list = dataclasses.field(default_factory=list)  # e.g. SQLite's own -journal
    keep_on_failure: list = None    # under --fsize: files whose old bytes a failed write keeps
    post: object = None             # f(work, before, after, result) -> None or damage found
    fsize: int = None               # RLIMIT_FSIZE for this case
    expect_reason: str = ""         # why a refusal is required (shown for accepted-bad)

    @property
    def family(self):
        return self.id.split("/", 1)[0]


@dataclasses.dataclass
class Result:
    rc: int
    stdout: str
    stderr: str
    timed_out: bool
    seconds: float


# --------------------------------------------------------------------------------------------
# Running one case


def execute(collage, argv, cwd, env, timeout, mem, fsize):
    """Run collage with the limits set in the child (so that no prlimit is needed), in its own
    session, so that a time-out kills every process it started."""

    def limits():
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    began = time.monotonic()
    proc = subprocess.Popen([collage] + argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=limits, start_new_session=True)
    timed_out = False
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # anything it left behind
        except ProcessLookupError:
            pass
    return Result(proc.returncode, out.decode("utf-8", "replace"),
                  err.decode("utf-8", "replace"), timed_out, time.monotonic() - began)


def snapshot(folder):
    """What is in a folder, without following links: kind and content hash of every entry."""
    entries = {}
    for top, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(top, name)
            rel = os.path.relpath(path, folder)
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                entries[rel] = ("link", os.readlink(path))
            elif stat.S_ISREG(st.st_mode):
                entries[rel] = ("file", file_hash(path))
            elif stat.S_ISDIR(st.st_mode):
                entries[rel] = ("dir", None)
            elif stat.S_ISFIFO(st.st_mode):
                entries[rel] = ("fifo", None)
            elif stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
                entries[rel] = ("device", st.st_rdev)
            else:
                entries[rel] = ("other", None)
    return entries


def file_hash(path, limit=256 << 20):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read(limit))
    return h.hexdigest()


def leaks_secret(path):
    """Whether a file holds any 32-byte run of the outside secret."""
    try:
        with open(path, "rb") as f:
            data = f.read(64 << 20)
    except OSError:
        return False
    return any(SECRET[k:k + 32] in data for k in range(0, len(SECRET) - 32, 32))


def damage_found(case, work, before, after, outside_before, outside_after, res):
    """Everything the run did to files it had no business touching."""
    problems = []
    if outside_before != outside_after:
        problems.append("changed a file outside the case folder")
    new_entries = {v for rel, v in after.items() if before.get(rel) != v}

    def moved_aside(rel, entry):
        # A write target renamed to a new name with its content intact (a damaged cost
        # database moved aside) is kept, not lost.
        return rel in case.writes and entry in new_entries

    for rel, (kind, digest) in before.items():
        now = after.get(rel)
        if now is None:
            if rel not in case.may_delete and not moved_aside(rel, (kind, digest)):
                problems.append(f"deleted {rel} ({kind})")
        elif now[0] != kind:
            if not moved_aside(rel, (kind, digest)):
                problems.append(f"replaced {rel}: {kind} became {now[0]}")
        elif now != (kind, digest) and kind != "dir":
            keep = case.writes if case.keep_on_failure is None else case.keep_on_failure
            if rel not in case.writes:
                problems.append(f"{rel}: modified")
            elif res.rc != 0 and case.fsize is not None and rel in keep:
                problems.append(f"{rel}: its old content lost after a failed write")
    for rel, (kind, _) in after.items():
        path = os.path.join(work, rel)
        if kind == "file" and (rel not in before or before[rel] != after[rel]):
            if leaks_secret(path):
                problems.append(f"{rel} holds bytes of a file outside the case folder")
            elif rel not in before and case.fsize is not None and (
                    res.rc != 0 or rel not in case.writes) and not sqlite_sidecar(rel) and \
                    ".corrupt-" not in rel:  # a moved-aside database: judged by case.post
                problems.append(f"partial file {rel} left after a failed write")
            elif rel not in before and (".tmp" in rel or os.path.basename(rel).startswith(".")):
                problems.append(f"temporary file {rel} left behind")
    if case.post:
        extra = case.post(work, before, after, res)
        if extra:
            problems.append(extra)
    return "; ".join(problems)


def sqlite_sidecar(rel):
    """SQLite's own -wal/-shm/-journal files, which it manages itself."""
    return rel.endswith(("-wal", "-shm", "-journal"))


def message_problems(text):
    found = [w for w in INTERNAL_WORDS if w in text]
    if found:
        return "internals in the message: " + ", ".join(repr(w) for w in found)
    bad = [c for c in text if ord(c) < 32 and c not in "\n\r\t"]
    if bad:
        return "unprintable characters in the message"
    if text and not text.endswith("\n"):
        return "message does not end with a newline"
    stray = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith(EXPECTED_LINES)]
    if stray:
        return f"a message spanning lines oddly ({stray[0][:80]!r})"
    return ""


def classify(case, res, damage, work):
    """The outcome and a one-line account of it."""
    if damage:
        return "damage", damage
    if res.timed_out:
        return "hang", f"still running after {res.seconds:.0f} s"
    if res.rc < 0:
        return "crash", f"killed by {signal.Signals(-res.rc).name}: {last_lines(res.stderr)}"
    if res.rc >= 128:
        return "crash", f"exit {res.rc}: {last_lines(res.stderr)}"
    internals = message_problems(res.stderr)
    if res.rc == 0:
        if case.expect == "refuse":
            return "accepted-bad", f"exit 0, but {case.expect_reason or 'must be refused'}"
        if case.check:
            wrong = case.check(work, res)
            if isinstance(wrong, tuple):
                if wrong[0] == "clean" and internals:
                    return "unclear", f"exit 0; {internals}: {last_lines(res.stderr)}"
                return wrong
            if wrong:
                return "wrong", wrong
        if internals:
            return "unclear", f"exit 0; {internals}: {last_lines(res.stderr)}"
        return "clean", "ran; checked" if case.check else "ran"
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("error: ")]
    if res.rc not in (1, 2):
        return "unclear", f"exit {res.rc}: {last_lines(res.stderr)}"
    if not errors:
        return "unclear", f"exit {res.rc} without an 'error:' line: {last_lines(res.stderr)}"
    if internals:
        return "unclear", f"{internals}: {' | '.join(errors)[:300]}"
    joined = " ".join(errors)
    if case.names and not any(n in joined for n in case.names):
        return "unclear", (f"error names none of {case.names}: {joined[:300]}")
    if case.expect == "ok":
        return "refused-valid", joined[:300]
    return "clean", "refused: " + joined[:200]


def last_lines(text, n=3):
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return " | ".join(lines[-n:])[:300] or "(nothing on stderr)"


class Campaign:
    def __init__(self, args):
        self.args = args
        self.collage = os.path.abspath(os.path.join(args.build, "collage"))
        self.root = tempfile.mkdtemp(prefix=f"hostile-inputs-seed{args.seed}-")
        self.kept = os.path.join(self.root, "kept")
        os.makedirs(self.kept)
        self.lock = threading.Lock()
        self.done = 0

    def binary(self):
        # Other people relink build/collage now and then: wait for it instead of failing.
        for _ in range(60):
            if os.access(self.collage, os.X_OK):
                return self.collage
            time.sleep(2)
        sys.exit(f"hostile_inputs: {self.collage} is missing (build first)")

    def run(self, case, total):
        base = tempfile.mkdtemp(dir=self.root, prefix="case-")
        work, outside, cache = (os.path.join(base, d) for d in ("work", "outside", "cache"))
        for d in (work, outside, cache):
            os.makedirs(d)
        with open(os.path.join(outside, "secret.bin"), "wb") as f:
            f.write(SECRET)
        env = dict(os.environ, COLLAGE_CACHE_DIR=cache)
        env.pop("COLLAGE_BACKEND_PATH", None)
        try:
            for rel, data in case.files.items():
                path = os.path.join(work, rel)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "wb") as f:
                    f.write(data)
            if case.setup:
                case.setup(work, outside)
        except Skip as e:
            shutil.rmtree(base, ignore_errors=True)
            return dict(id=case.id, outcome="skipped", detail=str(e))
        before, outside_before = snapshot(work), snapshot(outside)
        res = None
        for attempt in range(5):
            # A binary being relinked under us is missing or busy (ENOENT, ETXTBSY): retry.
            try:
                res = execute(self.binary(), case.argv, work, env, self.args.timeout,
                              self.args.mem, case.fsize)
                break
            except OSError:
                if attempt == 4:
                    raise
                time.sleep(10)
        after, outside_after = snapshot(work), snapshot(outside)
        damage = damage_found(case, work, before, after, outside_before, outside_after, res)
        outcome, detail = classify(case, res, damage, work)
        limits = f"prlimit --as={self.args.mem}" + (f" --fsize={case.fsize}" if case.fsize else "")
        record = dict(id=case.id, family=case.family, outcome=outcome, detail=detail,
                      rc=res.rc, seconds=round(res.seconds, 3),
                      command=" ".join([limits, shlex.quote(self.collage)] +
                                       [shlex.quote(a) for a in case.argv]))
        if outcome != "clean" or self.args.only:
            dest = os.path.join(self.kept, case.id.replace("/", "__"))
            os.rename(base, dest)
            record["folder"] = os.path.join(dest, "work")
            record["stderr"] = res.stderr[-2000:]
        else:
            shutil.rmtree(base, ignore_errors=True)
        with self.lock:
            self.done += 1
            if not self.args.verbose and self.done % 100 == 0:
                print(f"  {self.done}/{total}", file=sys.stderr, flush=True)
            if self.args.verbose or outcome != "clean":
                print(f"  [{outcome}] {case.id}: {detail[:200]}", file=sys.stderr, flush=True)
        return record


# --------------------------------------------------------------------------------------------
# Shared helpers for the families


def save(model):
    return model.SerializeToString()


def npy(array):
    import io
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=False)
    return buf.getvalue()


def compare_outputs(expected, rel_dir="out"):
    """A check: every expected output in work/out/NAME.npy, equal within 1e-3 normalized error
    (exactly, for integers)."""

    def check(work, res):
        for name, want in expected.items():
            path = os.path.join(work, rel_dir, name + ".npy")
            if not os.path.exists(path):
                return f"exit 0 but no {rel_dir}/{name}.npy written"
            try:
                got = np.load(path, allow_pickle=False)
            except Exception as e:  # noqa: BLE001
                return f"{rel_dir}/{name}.npy does not load: {e}"
            if tuple(got.shape) != tuple(want.shape):
                return f"output {name} has shape {list(got.shape)}, numpy says {list(want.shape)}"
            if want.dtype.kind in "iub":
                if not np.array_equal(got.astype(np.int64), want.astype(np.int64)):
                    return (f"output {name} differs: {got.reshape(-1)[:6]} vs numpy "
                            f"{want.reshape(-1)[:6]}")
                continue
            if want.size == 0:
                continue
            g, w = got.astype(np.float64), want.astype(np.float64)
            if not np.array_equal(np.isnan(g), np.isnan(w)):
                return f"output {name}: NaNs where numpy has none (or the reverse)"
            ok = ~np.isnan(w)
            err = np.max(np.abs(g[ok] - w[ok]), initial=0) / max(1.0, np.max(np.abs(w[ok]),
                                                                            initial=0))
            if not err <= 1e-3:
                return f"output {name} differs from numpy: normalized error {err:.3g}"
        return None

    return check


def reference_case(cid, model, feeds, extra_argv=(), names=(), expect=None, use_inputs=True,
                   command="run"):
    """A `collage run` of `model` with the inputs in `feeds`, whose expectation comes from the
    numpy evaluator: refuse what ONNX calls malformed or what cannot fit in memory, else the
    outputs must match (when they can be computed here)."""
    files = {"model.onnx": save(model)}
    argv = [command, "model.onnx"]
    if command == "run":
        for name, arr in feeds.items():
            files[f"{name}.npy"] = npy(arr)
            argv += ["--input", f"{name}={name}.npy"]
        argv += ["--random-inputs", "--output-dir", "out"]
    argv += list(extra_argv)
    reason, check, want = "", None, "either"
    try:
        outputs = hm.evaluate(model, feeds)
        want, check = "ok", compare_outputs(outputs)
    except hm.Invalid as e:
        want, reason = "refuse", f"ONNX's rules call it malformed ({e})"
    except hm.TooBig as e:
        want, reason = "refuse", f"its output cannot fit in memory ({e})"
    except (hm.Unchecked, hm.Unsupported):
        pass
    if command != "run":
        # info only describes the model: it must refuse what ONNX's checker rejects, but may
        # describe a model whose values make it fail at run time (an index out of range) or
        # whose outputs are too large to run.  Asked only when info exits 0 (the checker runs
        # in a child process: slow, and it can crash).
        check = None
        if want == "refuse":
            check = info_check(model, reason)
        want = "either"
    return Case(cid, argv, files, expect=expect or want, names=list(names) or ["model.onnx"],
                check=check, expect_reason=reason)


def info_check(model, reason):
    def check(work, res):
        if hm.onnx_checker_accepts(model):
            return None
        return ("accepted-bad", f"info exit 0 on a model ONNX's checker rejects; {reason}")
    return check


def pick(rng, items, quick, n_quick):
    """All of `items`, or a seeded sample of n_quick of them with --quick."""
    items = list(items)
    if not quick or len(items) <= n_quick:
        return items
    return rng.sample(items, n_quick)


def nr(rng):
    """A numpy generator drawn from the family's seeded random.Random."""
    return np.random.default_rng(rng.randrange(2**32))


def feeds_for(model, rng):
    shapes = hm.model_inputs(model)
    if shapes is None:
        return None
    return {k: np.asarray(nr(rng).standard_normal(v), dtype=np.float32) for k, v in shapes.items()}


# --------------------------------------------------------------------------------------------
# Family 1: damaged models


def model_mutations(model, rng):
    """(label, mutated ModelProto) for one seed model: the protobuf fields a careless exporter
    or a hostile file gets wrong.  Each copy is changed in one way."""
    out = []

    def mutant(label, fn):
        m = copy.deepcopy(model)
        try:
            fn(m, m.graph)
        except (IndexError, ValueError):  # the seed model lacks what it needs
            return
        out.append((label, m))

    def set_dim(vi, v):
        dims = vi.type.tensor_type.shape.dim
        d = dims[rng.randrange(len(dims))]
        d.ClearField("dim_param")
        d.dim_value = v

    for v in [0, -1, -7, 2**31, 2**40, INT64_MAX, INT64_MIN]:
        mutant(f"input-dim={v}", lambda m, g, v=v: set_dim(g.input[0], v))
    for v in [0, -1, 2**40, INT64_MAX]:
        mutant(f"output-dim={v}", lambda m, g, v=v: set_dim(g.output[0], v))
    for v in [0, -1, 7, 2**40, INT64_MAX]:
        def f(m, g, v=v):
            t = g.initializer[rng.randrange(len(g.initializer))]
            t.dims[rng.randrange(len(t.dims))] = v
        mutant(f"initializer-dim={v}", f)
    mutant("initializer-extra-dim", lambda m, g: g.initializer[0].dims.append(3))
    mutant("input-dim-symbolic", lambda m, g: setattr(
        g.input[0].type.tensor_type.shape.dim[0], "dim_param", "batch"))
    mutant("input-no-shape", lambda m, g: g.input[0].type.tensor_type.ClearField("shape"))
    mutant("input-rank-changed", lambda m, g: g.input[0].type.tensor_type.shape.dim.add(
        dim_value=2))
    for v in [0, 7, 11, 8, 16, 99, -1]:
        mutant(f"input-dtype={v}",
               lambda m, g, v=v: setattr(g.input[0].type.tensor_type, "elem_type", v))
    for v in [0, 7, 11, 8, 99]:
        mutant(f"initializer-dtype={v}",
               lambda m, g, v=v: setattr(g.initializer[0], "data_type", v))
    mutant("output-dtype=7",
           lambda m, g: setattr(g.output[0].type.tensor_type, "elem_type", 7))
    # What is missing
    mutant("no-graph-input", lambda m, g: g.input.pop(0))
    mutant("no-graph-output", lambda m, g: g.ClearField("output"))
    mutant("no-initializer", lambda m, g: g.initializer.pop(0))
    mutant("no-first-node", lambda m, g: g.node.pop(0))
    mutant("no-last-node", lambda m, g: g.node.pop())
    mutant("node-input-dropped", lambda m, g: g.node[0].input.pop())
    mutant("node-input-renamed", lambda m, g: g.node[-1].input.__setitem__(0, "nosuch"))
    mutant("node-no-outputs", lambda m, g: g.node[0].ClearField("output"))
    mutant("node-extra-output", lambda m, g: g.node[0].output.append("extra"))
    mutant("empty-graph", lambda m, g: g.ClearField("node"))
    mutant("empty-graph-no-io", lambda m, g: (g.ClearField("node"), g.ClearField("output"),
                                               g.ClearField("input"), g.ClearField("initializer")))
    # Duplicates
    mutant("duplicate-input", lambda m, g: g.input.append(copy.deepcopy(g.input[0])))
    mutant("duplicate-output", lambda m, g: g.output.append(copy.deepcopy(g.output[0])))
    mutant("duplicate-initializer",
           lambda m, g: g.initializer.append(copy.deepcopy(g.initializer[0])))
    mutant("initializer-named-like-input",
           lambda m, g: setattr(g.initializer[0], "name", g.input[0].name))
    mutant("two-nodes-one-output", lambda m, g: g.node[-1].output.__setitem__(
        0, g.node[0].output[0]) if len(g.node) > 1 else (_ for _ in ()).throw(IndexError))
    mutant("output-is-input", lambda m, g: g.output[0].CopyFrom(g.input[0]))
    mutant("duplicate-node-name", lambda m, g: setattr(g.node[-1], "name", g.node[0].name))
    # Cycles
    mutant("cycle", lambda m, g: g.node[0].input.__setitem__(0, g.node[-1].output[0]))
    mutant("self-loop", lambda m, g: g.node[0].input.__setitem__(0, g.node[0].output[0]))
    mutant("nodes-reversed", lambda m, g: (lambda ns: (g.ClearField("node"), g.node.extend(
        ns[::-1])))(list(g.node)) if len(g.node) > 1 else (_ for _ in ()).throw(IndexError))
    # Unknown ops, domains, opsets
    mutant("unknown-op", lambda m, g: setattr(g.node[0], "op_type", "NoSuchOp"))
    mutant("empty-op", lambda m, g: setattr(g.node[0], "op_type", ""))
    mutant("unknown-domain", lambda m, g: (setattr(g.node[0], "domain", "com.evil"),
                                           m.opset_import.add(domain="com.evil", version=1)))
    mutant("unknown-domain-no-opset", lambda m, g: setattr(g.node[0], "domain", "com.evil"))
    for v in [0, 1, 7, 10, 18, 22, 1000, -1, 2**62]:
        mutant(f"opset={v}", lambda m, g, v=v: setattr(m.opset_import[0], "version", v))
    mutant("no-opset-import", lambda m, g: m.ClearField("opset_import"))
    mutant("two-default-opsets", lambda m, g: m.opset_import.add(domain="", version=11))
    for v in [0, 2, 99]:
        mutant(f"ir-version={v}", lambda m, g, v=v: setattr(m, "ir_version", v))
    # Attributes
    mutant("attributes-removed", lambda m, g: [n.ClearField("attribute") for n in g.node])
    mutant("attribute-unknown", lambda m, g: g.node[0].attribute.append(
        helper.make_attribute("bogus", 1)))
    mutant("attribute-duplicated", lambda m, g: g.node[0].attribute.append(
        copy.deepcopy(g.node[0].attribute[0])))

    def wrong_attr_type(m, g):
        a = g.node[0].attribute[0]
        a.CopyFrom(helper.make_attribute(a.name, "a string"))
    mutant("attribute-wrong-type", wrong_attr_type)
    # Initializer payloads
    mutant("raw-data-halved", lambda m, g: setattr(
        g.initializer[0], "raw_data", g.initializer[0].raw_data[:len(g.initializer[0].raw_data)
                                                                // 2]))
    mutant("raw-data-empty", lambda m, g: setattr(g.initializer[0], "raw_data", b""))
    mutant("raw-data-extra", lambda m, g: setattr(
        g.initializer[0], "raw_data", g.initializer[0].raw_data + b"\0" * 12))
    mutant("raw-data-and-float-data", lambda m, g: g.initializer[0].float_data.extend([1.0]))

    def external(location, offset=None, length=None):
        def f(m, g):
            t = g.initializer[0]
            t.ClearField("raw_data")
            t.data_location = TensorProto.EXTERNAL
            t.external_data.add(key="location", value=location)
            if offset is not None:
                t.external_data.add(key="offset", value=str(offset))
            if length is not None:
                t.external_data.add(key="length", value=str(length))
        return f
    mutant("external-missing-file", external("nosuch.bin"))
    mutant("external-etc-hostname", external("/etc/hostname"))
    mutant("external-dotdot", external("../outside/secret.bin"))
    mutant("external-offset-huge", external("model.onnx", offset=2**62))
    mutant("external-offset-negative", external("model.onnx", offset=-5))
    mutant("external-length-huge", external("model.onnx", length=2**62))
    mutant("external-location-empty", external(""))
    return out


def family_models(rng, quick):
    """Models truncated, with flipped bytes and with protobuf fields mutated, each through
    `collage run MODEL --random-inputs` and `collage info MODEL`."""
    cases = []
    for mname, model in hm.base_models().items():
        data = save(model)
        variants = []  # (label, bytes, parsed ModelProto or None)
        n_cut = 6 if quick else 30
        cuts = sorted(set([1, 2, 4, len(data) // 2, len(data) - 1] +
                          [rng.randrange(1, len(data)) for _ in range(n_cut)]))
        if quick:
            cuts = rng.sample(cuts, min(len(cuts), n_cut))
        variants += [(f"truncate-{c:05d}", data[:c], None) for c in sorted(cuts)]
        for i in range(4 if quick else 60):
            b = bytearray(data)
            for _ in range(rng.randint(1, 4)):
                b[rng.randrange(len(b))] = rng.randrange(256)
            variants.append((f"flip-{i:02d}", bytes(b), None))
        mutations = model_mutations(model, rng)
        for label, m in pick(rng, mutations, quick, 10):
            variants.append((label, save(m), m))
        for label, blob, parsed in variants:
            if parsed is None:
                try:
                    parsed = onnx.load_from_string(blob)
                except Exception:  # noqa: BLE001 - unparsable: collage must refuse it
                    parsed = None
            cid = f"models/{mname}/{label}"
            cases.append(model_run_case(cid + "/run", blob, parsed, rng))
            cases.append(Case(cid + "/info", ["info", "model.onnx"], {"model.onnx": blob},
                              names=["model.onnx"]))
    return cases


def model_run_case(cid, blob, parsed, rng):
    files = {"model.onnx": blob}
    argv = ["run", "model.onnx"]
    check, expect, reason = None, "either", ""
    if parsed is None:
        expect, reason = "refuse", "the file does not parse as an ONNX model"
    else:
        feeds = feeds_for(parsed, rng)
        if feeds is not None:
            for name, arr in feeds.items():
                files[f"{name}.npy"] = npy(arr)
                argv += ["--input", f"{name}={name}.npy"]
            check = model_check(parsed, feeds)
    argv += ["--random-inputs", "--output-dir", "out"]
    return Case(cid, argv, files, expect=expect, expect_reason=reason, names=["model.onnx"],
                check=check)


def model_check(model, feeds):
    """For a mutated model collage ran: compare with numpy where numpy can run it; a model
    ONNX's own checker rejects and that numpy finds malformed should have been refused."""

    def check(work, res):
        try:
            want = hm.evaluate(model, feeds)
        except hm.Invalid as e:
            if not hm.onnx_checker_accepts(model):
                return ("accepted-bad", f"exit 0 on a model ONNX's checker rejects ({e})")
            return None  # the evaluator is stricter than ONNX: no verdict
        except hm.TooBig as e:
            return ("accepted-bad", f"exit 0, but the output cannot fit in memory ({e})")
        except (hm.Unchecked, hm.Unsupported) as e:
            return ("clean", f"ran; not checked ({e})")
        return compare_outputs(want)(work, res)

    return check


# --------------------------------------------------------------------------------------------
# Family 2: extreme attributes and constant inputs


def family_attributes(rng, quick):
    V = [0, -1, -2, 2**31 - 1, 2**31, 2**32 + 1, 2**62, INT64_MAX, INT64_MIN]
    x4 = nr(rng).standard_normal((1, 2, 5, 5)).astype(np.float32)
    x2 = nr(rng).standard_normal((4, 6)).astype(np.float32)
    w = hm.f32("w", nr(rng).standard_normal((3, 2, 3, 3)).astype(np.float32))
    specs = []  # (label, model, feeds)

    def conv(label, **attrs):
        m = hm.single_node("Conv", [1, 2, 5, 5], [("w", copy.deepcopy(w))], attrs, name="conv_x")
        specs.append((f"conv/{label}", m, {"x": x4}))

    def pool(op, label, **attrs):
        attrs.setdefault("kernel_shape", [2, 2])
        m = hm.single_node(op, [1, 2, 5, 5], [], attrs, name=f"{op.lower()}_x")
        specs.append((f"{op.lower()}/{label}", m, {"x": x4}))

    for v in V:
        conv(f"pads={v}", pads=[v] * 4)
        conv(f"pads-end={v}", pads=[0, 0, v, v])
        conv(f"strides={v}", strides=[v, v])
        conv(f"stride-w={v}", strides=[1, v])
        conv(f"dilations={v}", dilations=[v, v])
        conv(f"kernel_shape={v}", kernel_shape=[v, v])
        conv(f"group={v}", group=v)
        pool("MaxPool", f"kernel={v}", kernel_shape=[v, v])
        pool("MaxPool", f"strides={v}", strides=[v, v])
        pool("AveragePool", f"pads={v}", pads=[v] * 4, kernel_shape=[3, 3])
        pool("AveragePool", f"kernel={v}", kernel_shape=[v, 1])
    conv("pads-short", pads=[1, 1])
    conv("strides-empty", strides=[])
    conv("dilated-valid", dilations=[2, 2], pads=[2, 2, 2, 2])
    conv("strided-valid", strides=[2, 3], pads=[1, 0, 1, 0])

    # Range: the bounds near the int64 limits.  Range(-10, INT64_MAX-5, INT64_MAX) is exactly
    # two elements; Range(INT64_MIN, INT64_MAX, 1) has 2^64-1 and must be refused.
    ranges = [(-10, INT64_MAX - 5, INT64_MAX), (INT64_MIN, INT64_MAX, 1), (0, INT64_MAX, 1),
              (INT64_MAX, INT64_MIN, -1), (0, 10, 0), (INT64_MAX - 1, INT64_MAX, 1),
              (INT64_MIN, INT64_MIN + 3, 1), (5, 0, 1), (INT64_MIN, 0, INT64_MAX),
              (0, -10, INT64_MIN), (INT64_MAX, INT64_MAX - 3, -1), (0, 2**40, 1),
              (-(2**62), 2**62, 2**61), (INT64_MIN, INT64_MAX, INT64_MAX),
              (INT64_MAX, INT64_MIN, INT64_MIN)]
    for s, l, d in ranges:
        m = range_model(np.int64, s, l, d)
        specs.append((f"range/int64({s},{l},{d})", m, {}))
    for s, l, d in [(0, np.inf, 1), (0, np.nan, 1), (0, 1, 1e-30), (0, 1e30, 1), (1, 0, -0.25),
                    (0, 1, np.inf), (-np.inf, 0, 1)]:
        specs.append((f"range/float({s},{l},{d})", range_model(np.float32, s, l, d), {}))

    def with_const(op, label, shape, feeds, consts, attrs=None, out_rank=None):
        m = hm.single_node(op, shape, consts, attrs, out_rank=out_rank, name=f"{op.lower()}_x")
        specs.append((f"{op.lower()}/{label}", m, feeds))

    x23 = nr(rng).standard_normal((2, 3)).astype(np.float32)
    x31 = nr(rng).standard_normal((3, 1)).astype(np.float32)
    for v in V + [10**6]:
        with_const("Tile", f"repeats=[{v},1]", [2, 3], {"x": x23}, [("r", hm.i64("r", [v, 1]))])
        with_const("Tile", f"repeats=[1,{v}]", [2, 3], {"x": x23}, [("r", hm.i64("r", [1, v]))])
        with_const("Expand", f"shape=[{v},3,1]", [3, 1], {"x": x31},
                   [("s", hm.i64("s", [v, 3, 1]))], out_rank=3)
        with_const("Expand", f"shape=[3,{v}]", [3, 1], {"x": x31}, [("s", hm.i64("s", [3, v]))])
    with_const("Tile", "repeats=[2^32,2^32]", [2, 3], {"x": x23},
               [("r", hm.i64("r", [2**32, 2**32]))])
    with_const("Tile", "repeats-short", [2, 3], {"x": x23}, [("r", hm.i64("r", [2]))])
    with_const("Expand", "shape=[2^31,2^31]", [3, 1], {"x": x31},
               [("s", hm.i64("s", [2**31, 2**31]))])
    with_const("Expand", "shape=[2^21]*3", [3, 1], {"x": x31},
               [("s", hm.i64("s", [2**21] * 3))], out_rank=3)

    x1123 = nr(rng).standard_normal((1, 1, 2, 3)).astype(np.float32)
    for s in [np.nan, np.inf, -np.inf, -1.0, 0.0, 1e10, 1e-10, 3.0e38, 0.5, 1.5, 2**31]:
        with_const("Resize", f"scales={s}", [1, 1, 2, 3], {"x": x1123},
                   [("roi", hm.f32("roi", [])), ("sc", hm.f32("sc", [1, 1, s, s]))],
                   {"mode": "nearest"})
    for v in [0, -1, 1, 2**31, INT64_MAX, INT64_MIN]:
        with_const("Resize", f"sizes={v}", [1, 1, 2, 3], {"x": x1123},
                   [("roi", hm.f32("roi", [])), ("sc", hm.f32("sc", [])),
                    ("sz", hm.i64("sz", [1, 1, v, v]))], {"mode": "nearest"})
    with_const("Resize", "scales-short", [1, 1, 2, 3], {"x": x1123},
               [("roi", hm.f32("roi", [])), ("sc", hm.f32("sc", [2, 2]))], {"mode": "nearest"})

    for st in [INT64_MIN, -1, 0, 2, INT64_MAX]:
        for en in [INT64_MIN, -1, 3, INT64_MAX]:
            for sp in [1, -1, 2, INT64_MAX, INT64_MIN, 0]:
                with_const("Slice", f"start={st},end={en},step={sp}", [4, 6], {"x": x2},
                           [("a", hm.i64("a", [st])), ("b", hm.i64("b", [en])),
                            ("c", hm.i64("c", [1])), ("d", hm.i64("d", [sp]))])
    for ax in [2, -3, INT64_MAX, INT64_MIN]:
        with_const("Slice", f"axis={ax}", [4, 6], {"x": x2},
                   [("a", hm.i64("a", [0])), ("b", hm.i64("b", [2])), ("c", hm.i64("c", [ax]))])

    x234 = nr(rng).standard_normal((2, 3, 4)).astype(np.float32)
    for shp in [[2**32, 2**32], [INT64_MAX, 1], [-1, 0], [0, 0, 0, 0], [-1, -1], [24, -1],
                [2**62, 2**62, 0], [INT64_MIN], [-2, 12], [2**32, 2**32, 0, -1], [3, -1, INT64_MAX],
                [0, -1], [4, 6], [2**31, 2**31, 2**2], [2**33, -1]]:
        with_const("Reshape", f"shape={shp}", [2, 3, 4], {"x": x234},
                   [("s", hm.i64("s", shp))], out_rank=len(shp))

    x1133 = nr(rng).standard_normal((1, 1, 3, 3)).astype(np.float32)
    for label, pads in [("all", None), ("crop-all", [0, 0, -3, -3, 0, 0, 0, 0]),
                        ("crop-past", [0, 0, -4, 0, 0, 0, 0, 0]),
                        ("crop-some", [0, 0, -1, 1, 0, 0, 2, -2])]:
        if pads is not None:
            with_const("Pad", label, [1, 1, 3, 3], {"x": x1133}, [("p", hm.i64("p", pads))])
    for v in V:
        with_const("Pad", f"pads={v}", [1, 1, 3, 3], {"x": x1133}, [("p", hm.i64("p", [v] * 8))])
        with_const("Pad", f"pad-h={v}", [1, 1, 3, 3], {"x": x1133},
                   [("p", hm.i64("p", [0, 0, v, 0, 0, 0, 0, 0]))])

    for v in [3, 4, -4, -5, INT64_MAX, INT64_MIN, 2**31]:
        with_const("Gather", f"index={v}", [4, 6], {"x": x2}, [("i", hm.i64("i", [v]))])
    for ax in [2, -3, INT64_MAX]:
        with_const("Gather", f"axis={ax}", [4, 6], {"x": x2}, [("i", hm.i64("i", [0]))],
                   {"axis": ax})
    for perm in [[0, 0], [1, 2], [INT64_MAX, 0], [1]]:
        with_const("Transpose", f"perm={perm}", [4, 6], {"x": x2}, [], {"perm": perm})
    for ax in [1, 2, -3, INT64_MAX, INT64_MIN]:
        with_const("Concat", f"axis={ax}", [4, 6], {"x": x2},
                   [("k", hm.f32("k", np.ones((4, 6), np.float32)))], {"axis": ax})
        with_const("Softmax", f"axis={ax}", [4, 6], {"x": x2}, [], {"axis": ax})
        with_const("Flatten", f"axis={ax}", [4, 6], {"x": x2}, [], {"axis": ax}, out_rank=2)

    cases = []
    for label, model, feeds in pick(rng, specs, quick, 70):
        # A memory refusal names the graph ("graph 'g': cannot allocate ..."): accepted too.
        names = [n.name for n in model.graph.node] + [model.graph.node[0].op_type, "model.onnx",
                                                      "graph 'g'"]
        cases.append(reference_case(f"attributes/{label}/run", model, feeds, names=names))
        cases.append(reference_case(f"attributes/{label}/info", model, feeds, names=names,
                                    command="info"))
    return cases


def range_model(dtype, s, l, d):
    t = TensorProto.INT64 if dtype == np.int64 else TensorProto.FLOAT
    mk = (lambda n, v: nh.from_array(np.array(v, dtype=dtype), n))
    node = helper.make_node("Range", ["s", "l", "d"], ["y"], name="range_x")
    return hm.make_model([node], [], [hm.value_info("y", t, ["n"])],
                         [mk("s", s), mk("l", l), mk("d", d)])


# --------------------------------------------------------------------------------------------
# Family 3: input tensors


def npy_raw(descr="<f4", fortran=False, shape=(1, 3, 4, 4), data=None, version=(1, 0),
            header=None, magic=b"\x93NUMPY", header_len=None):
    """A .npy file written by hand, so that every field can be wrong."""
    if header is None:
        header = ("{'descr': %r, 'fortran_order': %s, 'shape': %r, }"
                  % (descr, fortran, tuple(shape)))
    hb = header.encode("latin1")
    lenfmt = "<H" if version[0] == 1 else "<I"
    pre = len(magic) + 2 + struct.calcsize(lenfmt)
    hb += b" " * ((64 - (pre + len(hb) + 1) % 64) % 64) + b"\n"
    n = len(hb) if header_len is None else header_len
    return magic + bytes(version) + struct.pack(lenfmt, n) + hb + (data or b"")


def tensor_pb(array=None, name="x", dims=None, data_type=None, raw=None, external=None):
    t = nh.from_array(array, name) if array is not None else TensorProto(name=name)
    if dims is not None:
        del t.dims[:]
        t.dims.extend(dims)
    if data_type is not None:
        t.data_type = data_type
    if raw is not None:
        t.raw_data = raw
    if external is not None:
        t.ClearField("raw_data")
        t.data_location = TensorProto.EXTERNAL
        for k, v in external.items():
            t.external_data.add(key=k, value=str(v))
    return t.SerializeToString()


def family_tensors(rng, quick):
    """Input files given with --input x=FILE to y = Relu(x + 1), x float32 1x3x4x4."""
    model = hm.make_model(
        [helper.make_node("Add", ["x", "one"], ["a"], name="add_one"),
         helper.make_node("Relu", ["a"], ["y"], name="relu_y")],
        [hm.value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])],
        [hm.value_info("y", TensorProto.FLOAT, [1, 3, 4, 4])], [hm.f32("one", 1.0)])
    mbytes = save(model)
    x = nr(rng).standard_normal((1, 3, 4, 4)).astype(np.float32)
    ref = lambda arr: {"y": np.maximum(arr.astype(np.float32) + 1, 0)}  # noqa: E731
    good_npy = npy(x)
    good_pb = tensor_pb(x)
    cases = []

    def case(label, fname, content=None, setup=None, expect="either", spec=None, check=None,
             extra=(), reason=""):
        files = {"model.onnx": mbytes}
        if content is not None:
            files[fname] = content
        spec = spec if spec is not None else [f"x={fname}"]
        argv = ["run", "model.onnx"]
        for s in spec:
            argv += ["--input", s]
        argv += ["--output-dir", "out"] + list(extra)
        cases.append(Case(f"tensors/{label}", argv, files, setup=setup, expect=expect,
                          names=[fname.split("/")[-1], "input 'x'"] + list(spec),
                          check=check, expect_reason=reason))

    good = compare_outputs(ref(x))
    case("npy-valid", "x.npy", good_npy, expect="ok", check=good)
    case("pb-valid", "x.pb", good_pb, expect="ok", check=good)
    cuts = list(range(0, 140, 7)) + [len(good_npy) - k for k in (1, 3, 4, 100)]
    for c in pick(rng, sorted(set(cuts)), quick, 6):
        case(f"npy-truncated-{c}", "x.npy", good_npy[:c], expect="refuse",
             reason="the file is truncated")
    for c in pick(rng, sorted(set([0, 1, 2, 5, 10, len(good_pb) // 2, len(good_pb) - 1])),
                  quick, 3):
        case(f"pb-truncated-{c}", "x.pb", good_pb[:c], expect="refuse",
             reason="the file is truncated")
    body = x.tobytes()
    raw_cases = {
        "header-len-65535": npy_raw(data=body, header_len=65535),
        "header-len-0": npy_raw(data=body, header_len=0),
        "v2-header-len-4G": npy_raw(data=body, version=(2, 0), header_len=0xFFFFFFFF),
        "bad-magic": npy_raw(data=body, magic=b"\x93NUMPZ"),
        "version-9": npy_raw(data=body, version=(9, 9)),
        "descr-f8": npy_raw("<f8", data=x.astype(np.float64).tobytes()),
        "descr-i4": npy_raw("<i4", data=x.astype(np.int32).tobytes()),
        "descr-i8": npy_raw("<i8", data=x.astype(np.int64).tobytes()),
        "descr-b1": npy_raw("|b1", data=bytes(48)),
        "descr-f2": npy_raw("<f2", data=x.astype(np.float16).tobytes()),
        "descr-object": npy_raw("|O", data=b"\x80\x04N."),
        "descr-unicode": npy_raw("<U10", data=bytes(48 * 40)),
        "descr-structured": npy_raw(header="{'descr': [('a', '<f4')], 'fortran_order': False,"
                                    " 'shape': (1, 3, 4, 4), }", data=body),
        "descr-garbage": npy_raw("<q9", data=body),
        "shape-wrong-rank": npy_raw(shape=(3, 4, 4), data=body),
        "shape-wrong-dims": npy_raw(shape=(1, 4, 3, 4), data=body),
        "shape-scalar": npy_raw(shape=(), data=body[:4]),
        "shape-empty": npy_raw(shape=(0,), data=b""),
        "shape-huge": npy_raw(shape=(2**40, 3, 4, 4), data=body),
        "shape-overflow": npy_raw(shape=(2**62, 2**62), data=body),
        "shape-negative": npy_raw(shape=(1, -3, 4, 4), data=body),
        "data-short": npy_raw(data=body[:-8]),
        "header-code": npy_raw(header="{'descr': __import__('os').getcwd(), 'fortran_order': "
                               "False, 'shape': (1, 3, 4, 4), }", data=body),
        "header-not-dict": npy_raw(header="[1, 2, 3]", data=body),
        "header-missing-key": npy_raw(header="{'descr': '<f4', 'shape': (1, 3, 4, 4), }",
                                      data=body),
        "header-unterminated": npy_raw(header="{'descr': '<f4', 'fortran_order': False, "
                                       "'shape': (1, 3, 4, 4", data=body),
        "header-nul": npy_raw(header="{'descr': '<f4\0', 'fortran_order': False, "
                              "'shape': (1, 3, 4, 4), }", data=body),
    }
    for label, content in pick(rng, raw_cases.items(), quick, 10):
        case(f"npy-{label}", "x.npy", content, expect="refuse",
             reason="the file is not a float32 1x3x4x4 array")
    # Valid but unusual encodings: either read right or refused, never misread.
    big = npy_raw(">f4", data=x.astype(">f4").tobytes())
    case("npy-big-endian", "x.npy", big, check=good)
    fort = npy_raw(fortran=True, data=np.asfortranarray(x).tobytes(order="F"))
    case("npy-fortran-order", "x.npy", fort, check=good)
    case("npy-trailing-bytes", "x.npy", good_npy + b"\0" * 16, check=good)
    case("npy-v2", "x.npy", npy_raw(version=(2, 0), data=body), check=good)
    case("npy-v3", "x.npy", npy_raw(version=(3, 0), data=body), check=good)
    pbs = {
        "pb-double": tensor_pb(x.astype(np.float64)),
        "pb-int64": tensor_pb(x.astype(np.int64)),
        "pb-dims-wrong": tensor_pb(x, dims=[1, 3, 4, 5]),
        "pb-dims-huge": tensor_pb(x, dims=[2**40, 3, 4, 4]),
        "pb-dims-negative": tensor_pb(x, dims=[1, -3, 4, 4]),
        "pb-dims-overflow": tensor_pb(x, dims=[2**62, 2**62]),
        "pb-raw-short": tensor_pb(x, raw=body[:-4]),
        "pb-no-data": tensor_pb(name="x", dims=[1, 3, 4, 4], data_type=TensorProto.FLOAT),
        "pb-dtype-99": tensor_pb(x, data_type=99),
        "pb-dtype-string": tensor_pb(x, data_type=TensorProto.STRING),
        "pb-external-secret": tensor_pb(name="x", dims=[1, 3, 4, 4], data_type=1,
                                        external={"location": "../outside/secret.bin"}),
        "pb-external-absolute": tensor_pb(name="x", dims=[1, 3, 4, 4], data_type=1,
                                          external={"location": "/etc/hostname"}),
    }
    for label, content in pick(rng, pbs.items(), quick, 6):
        case(label, "x.pb", content, expect="refuse",
             reason="the file is not a float32 1x3x4x4 tensor stored in it")
    pb_float_data = TensorProto(name="x", dims=[1, 3, 4, 4], data_type=TensorProto.FLOAT)
    pb_float_data.float_data.extend(x.reshape(-1).tolist())
    case("pb-float-data", "x.pb", pb_float_data.SerializeToString(), check=good)
    case("pb-other-name", "x.pb", tensor_pb(x, name="z"), check=good)

    # Not regular files
    case("empty-npy", "x.npy", b"", expect="refuse", reason="the file is empty")
    case("empty-pb", "x.pb", b"", expect="refuse", reason="the file is empty")
    case("directory", "x.npy", None, setup=lambda w, o: os.mkdir(os.path.join(w, "x.npy")),
         expect="refuse", reason="it is a directory")
    case("fifo", "x.npy", None, setup=lambda w, o: os.mkfifo(os.path.join(w, "x.npy")),
         expect="refuse", reason="it is a FIFO")
    case("dev-zero-symlink", "x.npy", None,
         setup=lambda w, o: os.symlink("/dev/zero", os.path.join(w, "x.npy")), expect="refuse",
         reason="it is a device")
    case("dev-zero-symlink-pb", "x.pb", None,
         setup=lambda w, o: os.symlink("/dev/zero", os.path.join(w, "x.pb")), expect="refuse",
         reason="it is a device")
    case("own-device-node", "x.npy", None, setup=lambda w, o: mknod(w, "x.npy", 1, 5),
         expect="refuse", reason="it is a device")
    case("symlink-loop", "x.npy", None,
         setup=lambda w, o: os.symlink("x.npy", os.path.join(w, "x.npy")), expect="refuse",
         reason="a symlink loop")
    case("missing", "nosuch.npy", None, expect="refuse", reason="no such file")
    case("symlink-to-outside-npy", "x.npy", None, check=good,
         setup=lambda w, o: (open(os.path.join(o, "x.npy"), "wb").write(good_npy),
                             os.symlink("../outside/x.npy", os.path.join(w, "x.npy"))))
    # The --input syntax itself
    for label, spec in [("no-equals", ["x.npy"]), ("no-name", ["=x.npy"]),
                        ("no-file", ["x="]), ("unknown-name", ["nosuch=x.npy"]),
                        ("twice-same", ["x=x.npy", "x=x.npy"]),
                        ("twice-different", ["x=x.npy", "x=x2.npy"]), ("npz", ["x=x.npz"]),
                        ("txt", ["x=x.txt"])]:
        files_name = "x.npy" if not spec[0].endswith(("npz", "txt")) else spec[0][2:]
        case(f"spec-{label}", files_name, good_npy, spec=spec,
             expect="either" if label == "twice-same" else "refuse",
             setup=lambda w, o: open(os.path.join(w, "x2.npy"), "wb").write(npy(x * 2)),
             reason="the --input value is wrong")
    return cases


def mknod(work, rel, major, minor):
    """A character device node of our own (the same as /dev/null or /dev/zero) inside the case
    folder: /dev itself is never touched."""
    if not IS_ROOT:
        raise Skip("mknod needs root")
    os.mknod(os.path.join(work, rel), 0o644 | stat.S_IFCHR, os.makedev(major, minor))


# --------------------------------------------------------------------------------------------
# Family 4: damaged plans


class Prep:
    """Artifacts that several families start from, made once by collage itself: plans and a
    cost database for the seed models."""

    def __init__(self, campaign):
        self.dir = os.path.join(campaign.root, "prep")
        os.makedirs(self.dir)
        self.collage = campaign.binary()
        models = hm.base_models()
        self.models = {k: models[k] for k in ("conv", "addrelu")}
        # A 2000-node chain: its plan is 85 kB, its cost database (costs.chain.sqlite) 12 kB.
        self.models["chain"] = relu_chain(2000)
        self.plans, self.db = {}, None
        for name, model in self.models.items():
            path = os.path.join(self.dir, f"{name}.onnx")
            with open(path, "wb") as f:
                f.write(save(model))
            cmd = [self.collage, "optimize", path, "--threads", "1", "--no-compare",
                   "--backends", "native" if name == "chain" else "native,onednn,xnnpack",
                   "--cost-db",
                   os.path.join(self.dir, "costs.chain.sqlite" if name == "chain" else
                                "costs.sqlite"), "--save-plan",
                   os.path.join(self.dir, f"{name}.plan")]
            r = subprocess.run(cmd, capture_output=True, text=True,
                               env=dict(os.environ, COLLAGE_CACHE_DIR=self.dir))
            if r.returncode != 0:
                sys.exit(f"hostile_inputs: preparing a plan failed: {' '.join(cmd)}\n{r.stderr}")
            with open(os.path.join(self.dir, f"{name}.plan"), "rb") as f:
                self.plans[name] = f.read()
        with open(os.path.join(self.dir, "costs.sqlite"), "rb") as f:
            self.db = f.read()
        with open(os.path.join(self.dir, "costs.chain.sqlite"), "rb") as f:
            self.chain_db = f.read()


def relu_chain(n):
    F = TensorProto.FLOAT
    nodes = [helper.make_node("Relu", [f"t{i}" if i else "x"], [f"t{i + 1}" if i + 1 < n else "y"],
                              name=f"relu_{i}") for i in range(n)]
    return hm.make_model(nodes, [hm.value_info("x", F, [1, 8])], [hm.value_info("y", F, [1, 8])],
                         [])


def json_paths(obj, prefix=()):
    """Every key path in a JSON document, leaves and containers alike."""
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from json_paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from json_paths(v, prefix + (i,))


def json_set(obj, path, value, delete=False):
    obj = copy.deepcopy(obj)
    target = obj
    for p in path[:-1]:
        target = target[p]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return obj


def family_plans(rng, quick, prep):
    cases = []
    for mname in ("conv", "addrelu"):
        model = prep.models[mname]
        feeds = feeds_for(model, rng)
        want = compare_outputs(hm.evaluate(model, feeds))
        plan_text = prep.plans[mname]
        plan = json.loads(plan_text)
        base_files = {"model.onnx": save(model)}
        base_files.update({f"{k}.npy": npy(v) for k, v in feeds.items()})
        argv = ["run", "model.onnx"] + [a for k in feeds for a in ("--input", f"{k}={k}.npy")] + \
            ["--plan", "p.plan", "--output-dir", "out"]

        def add(label, content, expect="either", reason=""):
            files = dict(base_files, **{"p.plan": content})
            cases.append(Case(f"plans/{mname}/{label}", argv, files, expect=expect,
                              names=["p.plan"], check=want, expect_reason=reason))

        add("valid", plan_text, expect="ok")
        cuts = sorted(set([0, 1, 2, len(plan_text) // 2, len(plan_text) - 2] +
                          [rng.randrange(len(plan_text)) for _ in range(20)]))
        for c in pick(rng, cuts, quick, 4):
            try:  # cutting only the final newline leaves the same plan
                same = json.loads(plan_text[:c]) == plan
            except ValueError:
                same = False
            add(f"truncate-{c:05d}", plan_text[:c], expect="either" if same else "refuse",
                reason="truncated JSON")
        values = ["str", None, 1e308, -1, 2**64, 2**63, 0, [], {}, True, 1.5, "", 10**400]
        paths = [p for p in json_paths(plan) if p]
        for path in pick(rng, paths, quick, 12):
            label = ".".join(str(p) for p in path)
            vals = values if not quick else rng.sample(values, 2)
            for v in vals:
                add(f"{label}={json.dumps(v)[:20]}", json.dumps(json_set(plan, path, v)).encode(),
                    expect="either")
            add(f"{label}=deleted", json.dumps(json_set(plan, path, None, delete=True)).encode())
        # Node ids and names that do not belong to this model; another model's hash.
        n_nodes = len(model.graph.node)
        for v in [n_nodes, 999, -1, INT64_MAX, 2**64]:
            p = copy.deepcopy(plan)
            p["groups"][0]["nodes"] = [v]
            add(f"node-id={v}", json.dumps(p).encode(), expect="refuse",
                reason="a node id out of range")
        p = copy.deepcopy(plan)
        p["groups"][0]["nodes"] = p["groups"][0]["nodes"] * 2
        add("node-twice-in-a-group", json.dumps(p).encode(), expect="refuse",
            reason="a node listed twice")
        if len(plan["groups"]) > 1:
            p = copy.deepcopy(plan)
            p["groups"][0]["nodes"] = p["groups"][0]["nodes"] + p["groups"][-1]["nodes"]
            add("node-in-two-groups", json.dumps(p).encode(), expect="refuse",
                reason="a node placed twice")
        p = copy.deepcopy(plan)
        p["groups"] = p["groups"][:-1]
        add("node-in-no-group", json.dumps(p).encode(), expect="refuse",
            reason="a node placed nowhere")
        for key, val in [("model_hash", "0000000000000000"), ("backend", "nosuch"),
                         ("format", "other-plan"), ("version", 999)]:
            p = copy.deepcopy(plan)
            if key == "backend":
                p["groups"][0]["backend"] = val
            else:
                p[key] = val
            add(f"{key}={val}", json.dumps(p).encode(), expect="refuse",
                reason=f"{key} {val} is wrong")
        for label, raw in [("deep-arrays", b"[" * 200000), ("deep-objects", b'{"a":' * 100000),
                           ("nan", plan_text.replace(b'"threads": 1', b'"threads": NaN')),
                           ("bom", b"\xef\xbb\xbf" + plan_text),
                           ("nul", plan_text[:20] + b"\0" + plan_text[20:]),
                           ("not-utf8", plan_text.replace(b'"native"', b'"nat\xffve"', 1)),
                           ("duplicate-key", plan_text.replace(b'{', b'{"groups": [], ', 1)),
                           ("empty", b""), ("null", b"null"), ("array", b"[]"),
                           ("number", b"42"), ("whitespace-8M", b" " * (8 << 20) + plan_text),
                           ("onnx-model-as-plan", save(model))]:
            add(label, raw)
    return cases


# --------------------------------------------------------------------------------------------
# Family 5: damaged cost databases


def db_read(data):
    """(tables, rows) of a database's bytes as Python's sqlite3 reads them: tables is None
    when it is not a readable SQLite file, rows None when it has no readable collage costs."""
    fd, path = tempfile.mkstemp(suffix=".sqlite")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            try:
                tables = {r[0] for r in con.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table'")}
            except sqlite3.Error:
                return None, None
            try:
                rows = set(con.execute("SELECT device, backend, backend_version, signature, "
                                       "threads FROM costs"))
            except sqlite3.Error:
                rows = None
            return tables, rows
        finally:
            con.close()
    finally:
        for suffix in ("", "-wal", "-shm", "-journal"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""


def same_pages(a, b, page=4096):
    """How many of a's pages b holds unchanged at the same offset."""
    return sum(a[i:i + page] == b[i:i + page] for i in range(0, len(a), page))


def costdb_post(original, foreign):
    """A damaged or foreign cost database must be kept: unchanged in place, or moved aside
    with the same bytes.  Only a readable collage database (or an empty file) may be written
    into, and then in place, its pages and rows surviving."""

    def post(work, before, after, res):
        digest = hashlib.sha256(original).hexdigest()
        if any(v == ("file", digest) for v in after.values()):
            return None
        if foreign:
            return "another program's database was written into or lost (its bytes are gone)"
        if not original:
            return None
        tables, rows = db_read(original)
        if tables is None:
            return "the damaged database was destroyed, not moved aside (its bytes are gone)"
        now = read(os.path.join(work, "db.sqlite"))
        n_pages = (len(original) + 4095) // 4096
        if same_pages(original, now) * 2 >= n_pages:
            return None  # used in place: most of its pages are untouched
        _, rows_now = db_read(now)
        if rows and not rows & (rows_now or set()):
            return "the database was replaced and its rows lost (not moved aside)"
        return None

    return post


def good_db_kept(original):
    """Under a failing write, a good cost database must stay where it is with its rows."""
    rows_before = db_read(original)[1] or set()

    def post(work, before, after, res):
        rows_now = db_read(read(os.path.join(work, "db.sqlite")))[1] or set()
        if not rows_before <= rows_now:
            moved = [r for r in after if r.startswith("db.sqlite.corrupt") and
                     not sqlite_sidecar(r)]
            return ("a good cost database lost its place: " +
                    (f"moved aside to {moved[0]} " if moved else "") +
                    f"and db.sqlite now holds {len(rows_now)} of its {len(rows_before)} rows")
        return None

    return post


SIDECARS = ["db.sqlite-journal", "db.sqlite-wal", "db.sqlite-shm"]  # SQLite's own files


def family_costdb(rng, quick, prep):
    model = prep.models["conv"]
    good = prep.db
    cases = []
    argv = ["optimize", "model.onnx", "--threads", "1", "--no-compare", "--backends", "native",
            "--cost-db", "db.sqlite"]

    def add(label, content=None, setup=None, expect="either", foreign=False, reason=""):
        files = {"model.onnx": save(model)}
        if content is not None:
            files["db.sqlite"] = content
        post = costdb_post(content, foreign) if content is not None else None
        cases.append(Case(f"costdb/{label}", argv, files, setup=setup, expect=expect,
                          names=["db.sqlite"], writes=["db.sqlite"], post=post,
                          may_delete=SIDECARS, expect_reason=reason))

    add("valid", good, expect="ok")
    cuts = sorted(set([0, 1, 15, 16, 99, 100, 101, 512, 1024, 4095, 4096, 4097, len(good) // 2,
                       len(good) - 1] + [rng.randrange(len(good)) for _ in range(10)]))
    for c in pick(rng, cuts, quick, 5):
        add(f"truncate-{c:06d}", good[:c])
    flips = [(i,) for i in range(0, 100, 3)] + [(rng.randrange(len(good)),) for _ in range(30)]
    for (pos,) in pick(rng, flips, quick, 6):
        b = bytearray(good)
        b[pos] ^= 1 << rng.randrange(8)
        b[(pos * 7 + 13) % len(b)] = rng.randrange(256)
        add(f"flip-{pos:06d}", bytes(b))
    for i in range(2 if quick else 8):  # a whole page overwritten with noise
        b = bytearray(good)
        page = rng.randrange(max(1, len(good) // 4096))
        b[page * 4096:(page + 1) * 4096] = bytes(rng.randrange(256) for _ in range(4096))
        add(f"page-noise-{i}", bytes(b[:len(good)]))

    def edited(statements, start=None):
        """The bytes of a SQLite file: `start` (the good database by default; b"" for a new
        one) with `statements` applied."""
        fd, path = tempfile.mkstemp(suffix=".sqlite")
        os.close(fd)
        with open(path, "wb") as f:
            f.write(good if start is None else start)
        con = sqlite3.connect(path)
        for s in statements:
            con.execute(s)
        con.commit()
        con.close()
        with open(path, "rb") as f:
            data = f.read()
        os.remove(path)
        return data

    foreign = {
        "foreign-costs-table": ["CREATE TABLE costs(x INTEGER, y TEXT)",
                                "INSERT INTO costs VALUES (1, 'mine')"],
        "foreign-users": ["CREATE TABLE users(name TEXT, email TEXT)",
                          "INSERT INTO users VALUES ('ann', 'ann@example.org')"],
        "foreign-no-constraints": [
            "CREATE TABLE costs(device, backend, backend_version, signature, threads, state, "
            "median_ms, p90_ms, samples, layouts, reason, pid, measured_at)",
            "INSERT INTO costs VALUES (NULL, NULL, NULL, NULL, 'x', 'bogus', 'fast', NULL, "
            "-1, '{{{', NULL, NULL, NULL)"],
    }
    for label, stmts in foreign.items():
        add(label, (lambda st: edited(st, b""))(stmts), foreign=True)
    add("newer-schema", edited(["PRAGMA user_version = 999"]), foreign=True,
        reason="a newer schema")
    add("empty-sqlite-db", edited(["PRAGMA user_version = 0", "CREATE TABLE t(a)", "DROP TABLE t"],
                                 start=b""))
    for label, stmts in {
        "text-costs": ["UPDATE costs SET median_ms = 'fast', p90_ms = 'slow'"],
        "negative-costs": ["UPDATE costs SET median_ms = -5, p90_ms = -1"],
        "huge-costs": ["UPDATE costs SET median_ms = 1e308, samples = 9223372036854775807"],
        "null-cost-blob": ["UPDATE costs SET median_ms = x'00ff'"],
        "garbage-layouts": ["UPDATE costs SET layouts = '{{{['"],
        "measuring-by-live-pid": ["UPDATE costs SET state = 'measuring', pid = 1"],
        "measuring-by-own-pid-range": ["UPDATE costs SET state = 'measuring', pid = -1"],
        "huge-threads": ["UPDATE costs SET threads = 9223372036854775807"],
        "rows-deleted": ["DELETE FROM costs"],
        "extra-column": ["ALTER TABLE costs ADD COLUMN extra TEXT DEFAULT 'x'"],
        "extra-table": ["CREATE TABLE other(a)", "INSERT INTO other VALUES (1)"],
    }.items():
        add(label, edited(stmts))
    # Leftover journals of another (crashed) process, next to a good database.
    for suffix in ("-journal", "-wal", "-shm"):
        noise = bytes(rng.randrange(256) for _ in range(4096))
        add(f"garbage{suffix}", good,
            setup=lambda w, o, s=suffix, n=noise: open(os.path.join(w, "db.sqlite" + s),
                                                       "wb").write(n))
    add("text-file", b"this is my shopping list\n" * 100)
    add("zero-bytes", b"")
    # Not a regular file at all.
    add("directory", setup=lambda w, o: os.mkdir(os.path.join(w, "db.sqlite")))
    add("fifo", setup=lambda w, o: os.mkfifo(os.path.join(w, "db.sqlite")))
    add("own-device-node", setup=lambda w, o: mknod(w, "db.sqlite", 1, 3))
    add("symlink-to-outside-file",
        setup=lambda w, o: os.symlink("../outside/secret.bin", os.path.join(w, "db.sqlite")))
    add("dangling-symlink",
        setup=lambda w, o: os.symlink("sub/none.sqlite", os.path.join(w, "db.sqlite")))
    cases.append(Case("costdb/missing-parent-dir",
                      argv[:-1] + ["no/such/dir/db.sqlite"], {"model.onnx": save(model)},
                      names=["no/such/dir"]))
    return cases


# --------------------------------------------------------------------------------------------
# Family 6: hostile files around a run: external data, output targets, file-size limits


def family_files(rng, quick, prep):
    cases = []
    F = TensorProto.FLOAT
    # y = x + W with W [1, 256] in external data and x given as zeros: the output *is* W, so a
    # W read from outside the model's folder shows up byte for byte in out/y.npy.
    wvals = nr(rng).standard_normal((1, 256)).astype(np.float32)

    def ext_model(location, offset=None, length=None):
        t = nh.from_array(wvals, "w")
        t.ClearField("raw_data")
        t.data_location = TensorProto.EXTERNAL
        t.external_data.add(key="location", value=location)
        if offset is not None:
            t.external_data.add(key="offset", value=str(offset))
        if length is not None:
            t.external_data.add(key="length", value=str(length))
        return save(hm.make_model([helper.make_node("Add", ["x", "w"], ["y"], name="add_w")],
                                  [hm.value_info("x", F, [1, 256])],
                                  [hm.value_info("y", F, [1, 256])], [t]))

    zeros = npy(np.zeros((1, 256), np.float32))
    run_ext = ["run", "model.onnx", "--input", "x=x.npy", "--output-dir", "out"]
    good = compare_outputs({"y": wvals})

    def ext(label, location, setup=None, expect="refuse", reason="", names=None, **kw):
        files = {"model.onnx": ext_model(location, **kw), "x.npy": zeros}
        cases.append(Case(f"files/external-{label}", run_ext, files, setup=setup, expect=expect,
                          check=good, names=(names or [location or "model.onnx"]) +
                          ["tensor 'w'"],
                          expect_reason=reason or "external data outside the model's folder"))
        cases.append(Case(f"files/external-{label}/info", ["info", "model.onnx"], files,
                          setup=setup, names=(names or [location or "model.onnx"]) +
                          ["tensor 'w'"]))

    def write_w(w, o, name="w.bin"):
        with open(os.path.join(w, name), "wb") as f:
            f.write(wvals.tobytes())

    ext("valid", "w.bin", setup=write_w, expect="ok")
    ext("valid-subdir", "sub/w.bin", expect="ok",
        setup=lambda w, o: (os.mkdir(os.path.join(w, "sub")), write_w(w, o, "sub/w.bin")))
    ext("symlink-outside", "w.bin",
        setup=lambda w, o: os.symlink("../outside/secret.bin", os.path.join(w, "w.bin")))
    ext("symlink-absolute", "w.bin",
        setup=lambda w, o: os.symlink(os.path.join(o, "secret.bin"), os.path.join(w, "w.bin")))
    ext("dir-symlink-outside", "sub/secret.bin",
        setup=lambda w, o: os.symlink("../outside", os.path.join(w, "sub")))
    ext("dotdot", "../outside/secret.bin")
    ext("absolute", "/etc/hostname")
    ext("absolute-secret", "/proc/self/environ")
    ext("fifo", "w.bin", setup=lambda w, o: os.mkfifo(os.path.join(w, "w.bin")),
        reason="a FIFO")
    ext("dev-zero-symlink", "w.bin", setup=lambda w, o: os.symlink("/dev/zero",
                                                                    os.path.join(w, "w.bin")),
        reason="a device")
    ext("own-device-node", "w.bin", setup=lambda w, o: mknod(w, "w.bin", 1, 5),
        reason="a device")
    ext("directory", "w.bin", setup=lambda w, o: os.mkdir(os.path.join(w, "w.bin")),
        reason="a directory")
    ext("short-file", "w.bin", reason="the file is too short",
        setup=lambda w, o: open(os.path.join(w, "w.bin"), "wb").write(b"\0" * 100))
    ext("offset-past-end", "w.bin", setup=write_w, offset=4096, reason="offset past the end")
    ext("offset-negative", "w.bin", setup=write_w, offset=-1, reason="a negative offset")
    ext("length-short", "w.bin", setup=write_w, length=16, reason="length too short")
    ext("length-huge", "w.bin", setup=write_w, length=2**63, reason="length too large")
    ext("location-empty", "", reason="no location", names=["model.onnx", "location"])

    # Output targets.  A plan saved onto: an existing file (replaced), a symlink (written
    # through, the link kept), a directory, a FIFO, a device node of our own (never replaced),
    # a missing folder.
    small = save(hm.base_models()["addrelu"])
    opt = ["optimize", "model.onnx", "--threads", "1", "--no-compare", "--backends", "native",
           "--cost-db", "db.sqlite", "--save-plan"]
    zoo = ["zoo", "export", "dcgan", "-o"]
    run_out = ["run", "model.onnx", "--random-inputs", "--output-dir"]
    old = b"my old file, keep me\n"

    def plan_ok(rel):
        def check(work, res):
            try:
                with open(os.path.join(work, rel), "rb") as f:
                    json.loads(f.read())
            except Exception as e:  # noqa: BLE001
                return f"exit 0 but {rel} is not a plan ({e})"
            return None
        return check

    def onnx_ok(rel):
        def check(work, res):
            try:
                onnx.load(os.path.join(work, rel))
            except Exception as e:  # noqa: BLE001
                return f"exit 0 but {rel} does not load as ONNX ({e})"
            return None
        return check

    targets = [
        # (label, target argument, setup, writes, expect, check-on-exit-0 needs the file at)
        ("existing-file", "t.out", lambda w, o: open(os.path.join(w, "t.out"), "wb").write(old),
         ["t.out"], "ok", "t.out"),
        ("symlink", "link.out", lambda w, o: (os.mkdir(os.path.join(w, "sub")),
                                              open(os.path.join(w, "sub/real.out"), "wb")
                                              .write(old),
                                              os.symlink("sub/real.out",
                                                         os.path.join(w, "link.out"))),
         ["sub/real.out"], "ok", "sub/real.out"),
        ("dangling-symlink", "link.out", lambda w, o: os.symlink(
            "new.out", os.path.join(w, "link.out")), [], "either", "link.out"),
        ("directory", "d.out", lambda w, o: (os.mkdir(os.path.join(w, "d.out")),
                                             open(os.path.join(w, "d.out/keep"), "wb").write(old)),
         [], "refuse", None),
        ("fifo", "f.out", lambda w, o: os.mkfifo(os.path.join(w, "f.out")), [], "refuse", None),
        ("own-device-node", "dev.out", lambda w, o: mknod(w, "dev.out", 1, 3), [], "either",
         None),
        ("missing-folder", "no/such/t.out", None, [], "refuse", None),
        ("trailing-slash", "t.out/", None, [], "refuse", None),
    ]
    for label, target, setup, writes, expect, at in targets:
        names = [target.rstrip("/")]
        cases.append(Case(f"files/save-plan-{label}", opt + [target],
                          {"model.onnx": small}, setup=setup, writes=writes, expect=expect,
                          names=names, check=plan_ok(at) if at else None,
                          expect_reason="not a place a file can be written"))
        cases.append(Case(f"files/zoo-export-{label}", zoo + [target], {}, setup=setup,
                          writes=writes, expect=expect, names=names,
                          check=onnx_ok(at) if at else None,
                          expect_reason="not a place a file can be written"))
    # --output-dir onto things that are not folders, and folders holding odd entries.
    out_targets = [
        ("symlink-to-dir", "lnk", lambda w, o: (os.mkdir(os.path.join(w, "realdir")),
                                                os.symlink("realdir", os.path.join(w, "lnk"))),
         "ok"),
        ("regular-file", "o.txt", lambda w, o: open(os.path.join(w, "o.txt"), "wb").write(old),
         "refuse"),
        ("fifo", "o.fifo", lambda w, o: os.mkfifo(os.path.join(w, "o.fifo")), "refuse"),
        ("own-device-node", "o.dev", lambda w, o: mknod(w, "o.dev", 1, 3), "refuse"),
        ("output-name-is-dir", "out", lambda w, o: os.makedirs(os.path.join(w, "out/y.npy")),
         "refuse"),
        ("output-name-is-fifo", "out", lambda w, o: (os.mkdir(os.path.join(w, "out")),
                                                     os.mkfifo(os.path.join(w, "out/y.npy"))),
         "refuse"),
        ("missing-nested", "a/b/c", None, "either"),
    ]
    for label, target, setup, expect in out_targets:
        cases.append(Case(f"files/output-dir-{label}", run_out + [target], {"model.onnx": small},
                          setup=setup, expect=expect, names=[target, "y.npy", "y.pb"],
                          expect_reason="not a folder outputs can be written into"))
    # Writes that fail part way: a file-size limit below the file's size.  The old file must be
    # kept whole and no partial file left beside it.  The plan is written by an optimize that
    # finds every cost in its small database (so that only the plan needs writing): a
    # 2000-node chain whose plan is 85 kB, under a 40 kB limit (above the 12 kB database and
    # SQLite's 8 kB -shm file).
    chain = save(prep.models["chain"])
    opt_chain = ["optimize", "model.onnx", "--threads", "1", "--no-compare", "--backends",
                 "native", "--cost-db", "db.sqlite", "--save-plan", "t.plan"]
    for label, argv, target, limit, model_bytes in [
            ("zoo-export", zoo + ["t.onnx"], "t.onnx", 1 << 20, small),
            ("save-plan", opt_chain, "t.plan", 40000, chain),
            ("output-dir", run_out + ["out"], "out/y.npy", 100, small)]:
        def setup(w, o, target=target):
            os.makedirs(os.path.dirname(os.path.join(w, target)), exist_ok=True)
            with open(os.path.join(w, target), "wb") as f:
                f.write(old)
        for with_old in (True, False):
            cases.append(Case(f"files/fsize-{label}{'-over-old' if with_old else ''}", argv,
                              {"model.onnx": model_bytes, "db.sqlite": prep.chain_db},
                              setup=setup if with_old else None, writes=[target, "db.sqlite"],
                              keep_on_failure=[target], post=good_db_kept(prep.chain_db),
                              fsize=limit, expect="refuse", may_delete=SIDECARS,
                              names=[os.path.basename(target), target],
                              expect_reason="the write cannot fit under the file-size limit"))
    # The cost database itself under the limit: a model whose costs are not in it yet, so that
    # recording them fails.  The good database must stay where it is, rows and all.
    cases.append(Case("files/fsize-cost-db", opt_chain[:-2],
                      {"model.onnx": save(hm.base_models()["gemm"]), "db.sqlite": prep.db},
                      writes=["db.sqlite"], fsize=8192, may_delete=SIDECARS, keep_on_failure=[],
                      names=["db.sqlite"], post=good_db_kept(prep.db)))
    return cases


# --------------------------------------------------------------------------------------------
# Family 7: command lines


def family_cmdline(rng, quick):
    m = save(hm.base_models()["addrelu"])
    files = {"model.onnx": m, "x.npy": npy(np.ones((1, 3, 4, 4), np.float32))}
    run = ["run", "model.onnx", "--random-inputs"]
    opt = ["optimize", "model.onnx", "--threads", "1", "--no-compare", "--backends", "native",
           "--cost-db", "db.sqlite"]
    bench = ["bench", "model.onnx", "--warmup", "1", "--iterations", "2"]
    specs = [  # (label, argv, names an error must mention, expect)
        ("no-command", [], [], "refuse"),
        ("unknown-command", ["frobnicate"], ["frobnicate"], "refuse"),
        ("zoo-unknown", ["zoo", "frob"], ["frob"], "refuse"),
        ("zoo-export-unknown-model", ["zoo", "export", "nosuch", "-o", "x.onnx"], ["nosuch"],
         "refuse"),
        ("zoo-export-no-o", ["zoo", "export", "dcgan"], ["-o", "--output"], "refuse"),
        ("zoo-export-o-no-value", ["zoo", "export", "dcgan", "-o"], ["-o"], "refuse"),
        ("run-no-model", ["run"], ["model"], "refuse"),
        ("run-unknown-flag", run + ["--bogus"], ["--bogus"], "refuse"),
        ("info-unknown-flag", ["info", "model.onnx", "--frobnicate"], ["--frobnicate"],
         "refuse"),
        ("optimize-unknown-flag", opt + ["--xyz"], ["--xyz"], "refuse"),
        ("run-two-models", ["run", "model.onnx", "model.onnx"], ["model.onnx"], "refuse"),
        ("backend-and-plan", run + ["--backend", "native", "--plan", "p"], ["--plan",
                                                                             "--backend"],
         "refuse"),
        ("no-inputs-given", ["run", "model.onnx"], ["x", "--input", "--random-inputs"],
         "refuse"),
    ]
    for flag in ["--shape", "--input", "--threads", "--output-dir", "--plan", "--backend",
                 "--tolerance", "--seed"]:
        specs.append((f"run-missing-value{flag}", run + [flag], [flag], "refuse"))
    for flag in ["--cost-db", "--save-plan", "--report", "--budget", "--search", "--rounds",
                 "--beam", "--backends"]:
        specs.append((f"optimize-missing-value{flag}", ["optimize", "model.onnx", flag], [flag],
                      "refuse"))
    bad_ints = ["-1", "99999999999", "1e3", "abc", "", "0x10", "2147483648", "-2147483649",
                "18446744073709551616"]
    for v in bad_ints:
        e = "either" if v == "0x10" else "refuse"  # hexadecimal 16 is a number
        specs.append((f"run-threads={v}", run + ["--threads", v], ["--threads", v], e))
        specs.append((f"bench-iterations={v}", bench + ["--iterations", v], ["--iterations", v],
                      e))
        specs.append((f"optimize-rounds={v}", opt + ["--rounds", v], ["--rounds", v], e))
    specs.append(("run-threads=0", run + ["--threads", "0"], [], "ok"))
    specs.append(("optimize-rounds=0", opt + ["--rounds", "0"], ["--rounds"], "refuse"))
    specs.append(("bench-iterations=0", bench + ["--iterations", "0"], ["--iterations"],
                  "refuse"))
    specs.append(("bench-warmup=-1", bench + ["--warmup", "-1"], ["--warmup"], "refuse"))
    for v in ["nan", "-1", "inf", "abc", "-nan", "1e999", ""]:
        specs.append((f"tolerance={v}", run + ["--check", "--tolerance", v], ["--tolerance", v],
                      "refuse"))
    for v in ["-1", "18446744073709551616", "abc"]:
        specs.append((f"seed={v}", run + ["--seed", v], ["--seed", v], "refuse"))
    for v in ["0s", "-5s", "abc", "1e30s", "5", "99999999999999999999s", "nans"]:
        specs.append((f"budget={v}", opt + ["--search", "two-level", "--budget", v],
                      ["--budget", v], "either" if v == "5" else "refuse"))
    for flag, v in [("--population", "0"), ("--population", "-1"), ("--generations", "-1"),
                    ("--beam", "0"), ("--beam", "-3"), ("--population", "99999999999")]:
        specs.append((f"optimize{flag}={v}", opt + ["--search", "two-level", flag, v],
                      [flag, v, flag.strip("-").rstrip("s")],  # "a population of ..." names it
                      "either" if (flag, v) == ("--beam", "0") else "refuse"))  # 0: unbounded
    for v in ["x=", "x=1x", "x=axb", "x=1x3x-4x4", "x=0x3x4x4", "x=99999999999x3x4x4", "=1x2",
              "nosuch=1x2", "x=1x3x4x4x5", "x", "x=1x3x4x4,", "x=" + "1x" * 5000 + "1",
              "x=2x3x4x4"]:  # the last contradicts a dim the model fixes: refused too
        specs.append((f"shape={v[:24]}", run + ["--shape", v], ["--shape", v[:40], "x"],
                      "refuse"))
    specs.append(("shape-same-as-model", run + ["--shape", "x=1x3x4x4"], [], "either"))
    for label, argv, names in [
            ("backend-unknown", run + ["--backend", "nosuch"], ["nosuch"]),
            ("backend-empty", run + ["--backend", ""], ["--backend", "backend named ''"]),
            ("backends-unknown", opt[:-4] + ["--backends", "nosuch", "--cost-db", "db.sqlite"],
             ["nosuch"]),
            ("backends-one-unknown", opt[:-4] + ["--backends", "native,nosuch", "--cost-db",
                                                 "db.sqlite"], ["nosuch"]),
            ("backends-empty", opt[:-4] + ["--backends", "", "--cost-db", "db.sqlite"],
             ["--backends"]),
            ("backends-commas", opt[:-4] + ["--backends", ",,,", "--cost-db", "db.sqlite"],
             ["--backends"]),
            ("search-unknown", opt + ["--search", "bogus"], ["bogus", "--search"]),
            ("backend-path-missing", run + ["--backend-path", "nosuch_dir"], ["nosuch_dir"]),
            ("backend-path-file", run + ["--backend-path", "model.onnx"], ["model.onnx"]),
            ("backend-path-garbage-lib", run + ["--backend-path", "plug"], ["libevil.so"]),
            ("model-is-dir", ["run", ".", "--random-inputs"], ["."]),
            ("model-long-name", ["info", "m" * 5000 + ".onnx"], ["mmmm"]),
            ("model-non-utf8", ["info", "mod\udcffel.onnx"], ["mod"]),
            ("bench-export-profile-dir", bench + ["--export-profile", "."], ["."]),
            ("report-into-dir", opt + ["--report", "."], ["."])]:
        specs.append((label, argv, names, "refuse"))

    def garbage_lib(w, o):
        os.mkdir(os.path.join(w, "plug"))
        with open(os.path.join(w, "plug/libevil.so"), "wb") as f:
            f.write(b"\x7fELF not really a library\n")

    cases = []
    for label, argv, names, expect in pick(rng, specs, quick, 45):
        cases.append(Case(f"cmdline/{label}", argv, dict(files),
                          setup=garbage_lib if "garbage-lib" in label else None,
                          expect=expect, names=names, writes=["db.sqlite"],
                          expect_reason="the value makes no sense"))
    return cases


# --------------------------------------------------------------------------------------------
# Report


def summarize(records, families):
    table = {}
    for f in families:
        rs = [r for r in records if r["family"] == f]
        row = {o: sum(r["outcome"] == o for r in rs) for o in OUTCOMES}
        row["cases"] = len(rs)
        clean = [r for r in rs if r["outcome"] == "clean"]
        row["refused"] = sum(r["detail"].startswith("refused") for r in clean)
        row["ran-checked"] = sum(r["detail"] == "ran; checked" for r in clean)
        row["ran-unchecked"] = len(clean) - row["refused"] - row["ran-checked"]
        row["seconds"] = round(sum(r["seconds"] for r in rs), 1)
        table[f] = row
    total = {o: sum(t[o] for t in table.values()) for o in OUTCOMES + CLEAN_KINDS}
    total["cases"] = sum(t["cases"] for t in table.values())
    total["seconds"] = round(sum(t["seconds"] for t in table.values()), 1)
    table["total"] = total
    return table


def print_report(table, records, wall, examples):
    cols = ["cases"] + OUTCOMES + CLEAN_KINDS
    heads = {"accepted-bad": "acc-bad", "refused-valid": "ref-valid", "ran-checked": "ran+chk",
             "ran-unchecked": "ran"}
    print(f"{'family':<11}" + "".join(f"{heads.get(c, c):>10}" for c in cols) + f"{'cpu-s':>8}")
    for f, row in table.items():
        print(f"{f:<11}" + "".join(f"{row[c]:>10}" for c in cols) + f"{row['seconds']:>8}")
    print("(clean = refused + ran+chk (exit 0, outputs equal to numpy's or the file checked) + "
          f"ran (exit 0, nothing to check)); wall time {wall:.0f} s")
    bad = [r for r in records if r["outcome"] not in ("clean", "skipped")]
    for f in table:
        if f == "total":
            continue
        for o in OUTCOMES[1:]:
            rs = [r for r in bad if r["family"] == f and r["outcome"] == o]
            if not rs:
                continue
            print(f"\n{f}: {o} ({len(rs)})")
            for r in rs[:examples]:
                print(f"  {r['id']}: {r['detail'][:400]}")
                print(f"    cd {shlex.quote(r['folder'])} && {r['command']}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "build"),
                    help="build folder holding collage (default: build)")
    ap.add_argument("--quick", action="store_true", help="fewer cases: 1-2 minutes")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", help="write every case's outcome and the table here")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds per case (default 30, 10 with --quick)")
    ap.add_argument("--mem", type=int, default=4 << 30, help="address-space limit, bytes")
    ap.add_argument("--family", action="append", choices=FAMILIES,
                    help="only this family (repeatable)")
    ap.add_argument("--only", help="only the cases whose id starts with this; keeps folders")
    ap.add_argument("--examples", type=int, default=3, help="examples printed per outcome")
    ap.add_argument("--verbose", action="store_true", help="print every case")
    args = ap.parse_args()
    if args.timeout is None:
        args.timeout = 10.0 if args.quick else 30.0
    families = args.family or FAMILIES

    started = time.monotonic()
    camp = Campaign(args)
    prep = Prep(camp) if {"plans", "costdb", "files"} & set(families) else None
    generators = {
        "models": lambda r: family_models(r, args.quick),
        "attributes": lambda r: family_attributes(r, args.quick),
        "tensors": lambda r: family_tensors(r, args.quick),
        "plans": lambda r: family_plans(r, args.quick, prep),
        "costdb": lambda r: family_costdb(r, args.quick, prep),
        "files": lambda r: family_files(r, args.quick, prep),
        "cmdline": lambda r: family_cmdline(r, args.quick),
    }
    cases = []
    for f in families:
        cases += generators[f](random.Random(f"{args.seed}:{f}"))
    if args.only:
        cases = [c for c in cases if c.id.startswith(args.only)]
    ids = [c.id for c in cases]
    dupes = {i for i in ids if ids.count(i) > 1}
    if dupes:
        sys.exit(f"hostile_inputs: duplicate case ids {sorted(dupes)[:5]}")
    print(f"hostile_inputs: {len(cases)} cases, {args.jobs} at a time, {args.timeout:.0f} s and "
          f"{args.mem >> 30} GiB each, seed {args.seed}{' (quick)' if args.quick else ''}; "
          f"collage {camp.collage}", file=sys.stderr, flush=True)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        records = list(pool.map(lambda c: camp.run(c, len(cases)), cases))
    skipped = [r for r in records if r["outcome"] == "skipped"]
    records = [r for r in records if r["outcome"] != "skipped"]
    wall = time.monotonic() - started
    table = summarize(records, families)
    print_report(table, records, wall, args.examples)
    if skipped:
        print(f"\nskipped {len(skipped)} cases: {skipped[0]['detail']}")
    bad = [r for r in records if r["outcome"] != "clean"]
    if bad or args.only:
        print(f"\nfolders of the non-clean cases kept under {camp.kept}")
    else:
        shutil.rmtree(camp.root, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(seed=args.seed, quick=args.quick, timeout_s=args.timeout,
                           mem_bytes=args.mem, wall_s=round(wall, 1), table=table,
                           not_clean=bad, skipped=len(skipped),
                           cases=[{k: r[k] for k in ("id", "outcome", "rc", "seconds")}
                                  for r in records]), f, indent=1)
    fatal = sum(table["total"][o] for o in FATAL)
    return 1 if fatal else 0


if __name__ == "__main__":
    sys.exit(main())
