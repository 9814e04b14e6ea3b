"""Shared helpers of the bench scripts' Markdown tables (bench-pubsub.sh,
bench-replication.sh): reading cairn-bench's JSON result files and
rendering one row per figure, Cairn beside Redis."""
import json, os, statistics

SERVERS = ("cairn", "redis")


def read(base):
    """The JSON document of one result file (base.json, with base.json.status
    and base.log beside it), or {"error": ...}."""
    try:
        with open(base + ".json") as f:
            text = f.read()
        doc = json.loads(text) if text.strip() else None
    except (OSError, ValueError) as e:
        return {"error": f"unreadable result: {e}"}
    if doc is None:
        status = "?"
        if os.path.exists(base + ".json.status"):
            status = open(base + ".json.status").read().strip()
        lines = []
        if os.path.exists(base + ".log"):
            lines = [l for l in open(base + ".log").read().splitlines() if l.strip()]
        why = ", timed out" if status == "124" else ""
        doc = {"error": f"no result (exit status {status}{why})" + (": " + lines[-1] if lines else "")}
    return doc


def na(err, cut=None):
    """An n/a cell for an error, quoted from "server error: " on if it has
    one, and before cut if given."""
    err = err or "no runs"
    i = err.find("server error: ")
    if i >= 0:
        err = err[i:]
    if cut:
        err = err.split(cut)[0]
    err = " ".join(err.split())
    if len(err) > 110:
        err = err[:107] + "..."
    return "n/a (" + err.replace("|", "\\|") + ")"


def ints(v, n): return f"{v:.0f}"
def one(v, n): return f"{v:.1f}"
def two(v, n): return f"{v:.2f}"
def of_runs(v, n): return f"{v} of {n}"
def count_true(values): return sum(1 for v in values if v)


class Table:
    """The rows of a table. data[mode][server] is (the successful results
    of the mode's runs against the server, the first error of the others);
    expected(mode) is how many runs each mode had; na_cut is passed to na."""

    def __init__(self, data, expected, na_cut=None):
        self.data, self.expected, self.na_cut, self.rows = data, expected, na_cut, []

    def row(self, label, mode, key, fmt, agg=statistics.median, target="—", check=None, ratio=True):
        """Adds a row: agg (the median unless said otherwise) of key over
        the successful runs against each server, their ratio, the target
        and whether Cairn meets it (check(cairn, redis))."""
        vals, texts = [], []
        expected = self.expected(mode)
        for s in SERVERS:
            results, err = self.data[mode][s]
            if not results:
                vals.append(None)
                texts.append(na(err, self.na_cut))
                continue
            v = agg([key(d) for d in results])
            text = fmt(v, len(results))
            if len(results) < expected:
                text += f" ({len(results)} of {expected} runs; the others {na(err, self.na_cut)})"
            vals.append(v)
            texts.append(text)
        c, r = vals
        rt = f"{c / r:.2f}" if ratio and c is not None and r else "—"
        met = ""
        if check:
            ok = check(c, r)
            met = "n/a" if ok is None else ("yes" if ok else "**no**")
        self.rows.append((label, texts[0], texts[1], rt, target, met))

    def print(self, cairn="Cairn"):
        print(f"| benchmark | {cairn} | Redis | Cairn/Redis | target | met |")
        print("|---|---:|---:|---:|---|---|")
        for r in self.rows:
            print("| " + " | ".join(r) + " |")
