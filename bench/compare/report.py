"""The comparison's results as a markdown table and a bar chart (compare.py writes both)."""
import math
import os
import statistics

PEER_NAMES = {"onnxruntime": "ONNX Runtime", "openvino": "OpenVINO", "tvm": "TVM", "pytorch": "PyTorch"}
# collage's plans, as compare.py labels them, and their columns.
PLANS = {"collage": "collage optimize", "collage two-level": "two-level", "collage op-level": "op-level"}


def headline(results):
    """The plan the ratio is taken of: `collage optimize`'s; runs before it was timed (no
    "headline" in their JSON) took the two-level plan's."""
    return results.get("headline", "collage two-level")


def paired_ratio(contenders, label):
    """Round by round, the faster other runtime's time over `label`'s: their median, least and
    greatest; None without rounds to pair. Contenders timed once sit out."""
    mine = contenders.get(label)
    if not _ms(mine) or mine.get("timed_once") or not mine.get("rounds_ms"):
        return None
    rounds = len(mine["rounds_ms"])
    peers = [e for name, e in contenders.items() if name in PEER_NAMES and _ms(e)
             and not e.get("timed_once") and len(e.get("rounds_ms", [])) == rounds]
    if not peers:
        return None
    return ratio_summary([min(p["rounds_ms"][r] for p in peers) / mine["rounds_ms"][r] for r in range(rounds)])


def ratio_summary(ratios):
    """Ratios taken round by round: their median, least and greatest."""
    return {"ratio": statistics.median(ratios), "min": min(ratios), "max": max(ratios)}


def verdict(summary, bar, reached):
    """`reached` when the median ratio meets `bar`, "within spread" when only the best round
    does, else "slower" (the comparison's and the parity benchmark's verdicts)."""
    return reached if summary["ratio"] >= bar else "within spread" if summary["max"] >= bar else "slower"


def shown_name(workload):
    """A workload as the table and the chart name it: a user's FILE.onnx by its file name."""
    return os.path.basename(workload) if workload.endswith(".onnx") else workload


def contender_labels(results):
    """Every contender that some workload has, at any thread count."""
    return {label for per_threads in results["workloads"].values() for r in per_threads.values()
            for label in r["contenders"]}


def _ms(entry):
    return entry.get("ms") if entry and entry.get("status") == "ok" else None


def summarize(contenders):
    """The figures one row of the table needs, from one (workload, threads) result."""
    singles = {label[len("collage "):]: _ms(e) for label, e in contenders.items()
               if label.startswith("collage ") and label not in PLANS and _ms(e)}
    peers = {label: _ms(e) for label, e in contenders.items() if label in PEER_NAMES and _ms(e)}
    best_single = min(singles, key=singles.get) if singles else None
    best_peer = min(peers, key=peers.get) if peers else None
    return {
        "best_single": best_single,
        "best_single_ms": singles.get(best_single),
        "best_peer": best_peer,
        "best_peer_ms": peers.get(best_peer),
    }


def peak_share(entry):
    """The plan's arithmetic rate at its median time and that rate's share of the CPU's float32
    peak (measured by `collage bench`), or None where the run did not report them."""
    compute = entry.get("compute") if _ms(entry) else None
    if not compute or not compute.get("fp32_peak_gflops"):
        return None
    gflops = compute["gflop_per_run"] / (entry["ms"] / 1e3)
    return {"gflops": gflops, "share": gflops / compute["fp32_peak_gflops"]}


def _cell(entry):
    if entry is None:
        return "—"
    if entry.get("status") == "ok":
        return f"{entry['ms']:.2f}" + ("*" if entry.get("timed_once") else "")
    if entry.get("status") == "wrong outputs":
        return f"wrong ({entry['error']:.0e})"
    return "failed"


def markdown(results):
    excluded = results.get("excluded_backends")
    warmup = " after a warm-up round" if results.get("warmup_round") else ", the first (a warm-up) counted,"
    lines = [f"Measured {results['date']} on {results['machine']}; float32, batch 1 (torch: models: "
             f"their test data's batch), "
             f"{results['rounds']} interleaved rounds{warmup} (median of round medians, ms); two-level search "
             f"budget {results['two_level_budget_s']:.0f} s; outputs checked against collage's reference "
             f"run within {results['tolerance']:g} normalized before any time counts.",
             "Versions: " + ", ".join(f"{k} {v}" for k, v in results["versions"].items()) + "."]
    if excluded:
        lines.append("collage's backends " + ", ".join(excluded) + " were left out: its searches and "
                     "single-backend contenders used the others only.")
    lines.append("")
    failures = []
    kept = headline(results)
    # Columns only for what some row has (a run may leave out the two-level plan, the
    # single-backend contenders or some runtimes).
    labels = contender_labels(results)
    plan_labels = [label for label in PLANS if label in labels]
    peer_labels = [label for label in PEER_NAMES if label in labels]
    with_singles = any(label.startswith("collage ") and label not in PLANS for label in labels)
    columns = [PLANS[label] for label in plan_labels] + ["best collage single backend"] * with_singles
    columns += [PEER_NAMES[label] for label in peer_labels]
    with_peak = any(peak_share(r["contenders"].get(kept)) for per_threads in results["workloads"].values()
                    for r in per_threads.values())
    columns += ["collage's share of float32 peak"] * with_peak
    for threads in results["threads"]:
        lines += [f"**{threads} thread{'s' if threads > 1 else ''}**", "",
                  "| workload | " + " | ".join(columns) + " | best other runtime / collage (rounds' range) |",
                  "|---|" + "---|" * len(columns) + "---|"]
        ratios = []
        verdicts = {}
        for name, per_threads in results["workloads"].items():
            r = per_threads.get(str(threads))
            if not r:
                continue
            c = r["contenders"]
            s = summarize(c)
            paired = paired_ratio(c, kept)
            if paired:
                ratios.append(paired["ratio"])
                row_verdict = verdict(paired, 1.0, "≥ 1.0")
                verdicts[row_verdict] = verdicts.get(row_verdict, 0) + 1
            single = f"{s['best_single']} {s['best_single_ms']:.2f}" if s["best_single"] else "—"
            cells = [f"**{_cell(c[label])}**" if label == kept and _ms(c.get(label)) else _cell(c.get(label))
                     for label in plan_labels] + [single] * with_singles
            cells += [_cell(c.get(p)) for p in peer_labels]
            share = peak_share(c.get(kept))
            cells += [f"{100 * share['share']:.0f}% ({share['gflops']:.0f} GFLOP/s)" if share else "—"] * with_peak
            ratio_cell = (f"{paired['ratio']:.2f}x ({paired['min']:.2f}–{paired['max']:.2f}) "
                          f"{PEER_NAMES[s['best_peer']]}" if paired else "—")
            lines.append(f"| {shown_name(name)} | " + " | ".join(cells) + f" | {ratio_cell} |")
            for label, e in c.items():
                if e.get("status") != "ok":
                    failures.append(f"- {shown_name(name)}, {threads} thread(s), {label}: {e['status']}"
                                    + (f": {e['detail']}" if e.get("detail") else f" (error {e.get('error', 0):.1e})"))
        if ratios:
            geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
            cells = ["**geometric mean**"] + [""] * len(columns) + [f"**{geomean:.2f}x**"]
            lines.append("| " + " | ".join(cells) + " |")
            lines += ["", f"{len(ratios)} workloads: " + ", ".join(
                f"{count} {v}" for v, count in sorted(verdicts.items())) + "."]
        lines.append("")
    lines.append(f"The ratio is {PLANS[kept]}'s plan (bold) against the fastest other runtime, round by round "
                 "(the median of the rounds' ratios, their least and greatest in brackets; named: the "
                 "runtime fastest over all rounds); above 1, collage is faster. \\* timed once: a run took "
                 "seconds, far from the others, so it sat out the rounds.")
    if with_peak:
        lines.append("")
        lines.append("Share of float32 peak: the model's nominal GFLOP (a multiply-add counts 2, padded "
                     "positions included) over the plan's median time, against this CPU's peak at those "
                     "threads as `collage bench` measures it (fused multiply-adds on the widest vectors). "
                     "Near 100%, no placement can be much faster; above it, the kernels skip work the "
                     "count includes (convolutions' padding).")
    if failures:
        lines += ["", "Not timed:"] + failures
    return "\n".join(lines) + "\n"


def chart(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = contender_labels(results)
    series = [(label, "collage " + column if label != "collage" else column) for label, column in PLANS.items()]
    series += [(label, name) for label, name in PEER_NAMES.items()]
    series = [(label, legend) for label, legend in series if label in labels]
    figure, axes = plt.subplots(len(results["threads"]), 1, figsize=(13, 4.2 * len(results["threads"])),
                                squeeze=False)
    for axis, threads in zip(axes[:, 0], results["threads"]):
        names = [n for n, t in results["workloads"].items() if str(threads) in t]
        width = 0.8 / len(series)
        for i, (label, legend) in enumerate(series):
            speedups = []
            for name in names:
                c = results["workloads"][name][str(threads)]["contenders"]
                # The table's paired ratio where the rounds allow it, else the medians'.
                paired = paired_ratio(c, label)
                best = summarize(c)["best_peer_ms"]
                ms = _ms(c.get(label))
                speedups.append(paired["ratio"] if paired else best / ms if best and ms else 0)
            axis.bar([x + (i - len(series) / 2 + 0.5) * width for x in range(len(names))], speedups, width,
                     label=legend)
        axis.axhline(1.0, color="black", linewidth=0.8)
        axis.set_yscale("log")
        axis.set_xticks(range(len(names)), [shown_name(n) for n in names], rotation=30, ha="right", fontsize=8)  # 20 names fit
        axis.set_ylabel("speed vs fastest other runtime")
        axis.set_title(f"{threads} thread{'s' if threads > 1 else ''} — higher is faster; "
                       f"{results['date']}, {results['machine']}", fontsize=9)
        axis.legend(fontsize=8, ncol=len(series))
    figure.tight_layout()
    figure.savefig(path, dpi=110)
