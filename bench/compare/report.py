"""The comparison's results as a markdown table and a bar chart (compare.py writes both)."""
import math

PEER_NAMES = {"onnxruntime": "ONNX Runtime", "openvino": "OpenVINO", "tvm": "TVM", "pytorch": "PyTorch"}


def _ms(entry):
    return entry.get("ms") if entry and entry.get("status") == "ok" else None


def summarize(contenders):
    """The figures one row of the table needs, from one (workload, threads) result."""
    singles = {label[len("collage "):]: _ms(e) for label, e in contenders.items()
               if label.startswith("collage ") and not label.endswith("-level") and _ms(e)}
    peers = {label: _ms(e) for label, e in contenders.items() if label in PEER_NAMES and _ms(e)}
    best_single = min(singles, key=singles.get) if singles else None
    best_peer = min(peers, key=peers.get) if peers else None
    return {
        "two_level": _ms(contenders.get("collage two-level")),
        "op_level": _ms(contenders.get("collage op-level")),
        "best_single": best_single,
        "best_single_ms": singles.get(best_single),
        "best_peer": best_peer,
        "best_peer_ms": peers.get(best_peer),
    }


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
    lines = [f"Measured {results['date']} on {results['machine']}; float32, batch 1 (torch: models: "
             f"their test data's batch), "
             f"{results['rounds']} interleaved rounds (median of round medians, ms); two-level search "
             f"budget {results['two_level_budget_s']:.0f} s; outputs checked against collage's reference "
             f"run within {results['tolerance']:g} normalized before any time counts.",
             "Versions: " + ", ".join(f"{k} {v}" for k, v in results["versions"].items()) + "."]
    if excluded:
        lines.append("collage's backends " + ", ".join(excluded) + " were left out: its searches and "
                     "single-backend contenders used the others only.")
    lines.append("")
    failures = []
    for threads in results["threads"]:
        lines += [f"**{threads} thread{'s' if threads > 1 else ''}**", "",
                  "| workload | collage two-level | op-level | best collage single backend | "
                  + " | ".join(PEER_NAMES.values()) + " | best other runtime / collage |",
                  "|---|---|---|---|" + "---|" * len(PEER_NAMES) + "---|"]
        ratios = []
        for name, per_threads in results["workloads"].items():
            r = per_threads.get(str(threads))
            if not r:
                continue
            c = r["contenders"]
            s = summarize(c)
            ratio = s["best_peer_ms"] / s["two_level"] if s["best_peer_ms"] and s["two_level"] else None
            if ratio:
                ratios.append(ratio)
            single = f"{s['best_single']} {s['best_single_ms']:.2f}" if s["best_single"] else "—"
            two = f"**{s['two_level']:.2f}**" if s["two_level"] else _cell(c.get("collage two-level"))
            lines.append(f"| {name} | {two} | {_cell(c.get('collage op-level'))} | {single} | "
                         + " | ".join(_cell(c.get(p)) for p in PEER_NAMES) + " | "
                         + (f"{ratio:.2f}x ({PEER_NAMES[s['best_peer']]})" if ratio else "—") + " |")
            for label, e in c.items():
                if e.get("status") != "ok":
                    failures.append(f"- {name}, {threads} thread(s), {label}: {e['status']}"
                                    + (f": {e['detail']}" if e.get("detail") else f" (error {e.get('error', 0):.1e})"))
        if ratios:
            geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
            cells = ["**geometric mean**"] + [""] * (3 + len(PEER_NAMES)) + [f"**{geomean:.2f}x**"]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    lines.append("A ratio above 1 means collage's two-level plan is faster than the fastest other runtime. "
                 "\\* timed once: a run took seconds, far from the others, so it sat out the rounds.")
    if failures:
        lines += ["", "Not timed:"] + failures
    return "\n".join(lines) + "\n"


def chart(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = [("collage two-level", "collage two-level"), ("collage op-level", "collage op-level")]
    series += [(label, name) for label, name in PEER_NAMES.items()]
    figure, axes = plt.subplots(len(results["threads"]), 1, figsize=(13, 4.2 * len(results["threads"])),
                                squeeze=False)
    for axis, threads in zip(axes[:, 0], results["threads"]):
        names = [n for n, t in results["workloads"].items() if str(threads) in t]
        width = 0.8 / len(series)
        for i, (label, legend) in enumerate(series):
            speedups = []
            for name in names:
                c = results["workloads"][name][str(threads)]["contenders"]
                best = summarize(c)["best_peer_ms"]
                ms = _ms(c.get(label))
                speedups.append(best / ms if best and ms else 0)
            axis.bar([x + (i - len(series) / 2 + 0.5) * width for x in range(len(names))], speedups, width,
                     label=legend)
        axis.axhline(1.0, color="black", linewidth=0.8)
        axis.set_yscale("log")
        axis.set_xticks(range(len(names)), names)
        axis.set_ylabel("speed vs fastest other runtime")
        axis.set_title(f"{threads} thread{'s' if threads > 1 else ''} — higher is faster; "
                       f"{results['date']}, {results['machine']}", fontsize=9)
        axis.legend(fontsize=8, ncol=len(series))
    figure.tight_layout()
    figure.savefig(path, dpi=110)
