"""A measurement's result: the library's own reports (text, JSON, HTML),
taken when it was measured, plus what the binding adds ("binding": its
host overhead, its warnings). The JSON is the document the C program
writes (`inferbench compare` reads it), with one more member."""

import json
import os
import sys
import tempfile


class Result:
    """kind: "latency", "throughput", "pitfalls", "generation" or
    "calibration".
    data: the JSON document as a dict; text: the library's text report."""

    def __init__(self, kind, document, text, html, binding):
        self.kind = kind
        self.data = json.loads(document)
        self.data["binding"] = binding
        self.text = text
        self._html = html

    @property
    def partial(self):
        """True when the measurement stopped early (error, Ctrl-C)."""
        return bool(self.data.get("partial"))

    @property
    def warnings(self):
        return list(self.data.get("warnings") or []) + list(self.data["binding"].get("warnings", []))

    @property
    def latency_ms(self):
        """The statistics of the primary timing (latency), a dict."""
        return self.data.get("latency_ms")

    @property
    def median_ms(self):
        stats = self.latency_ms
        return stats["p50"] if stats else None

    @property
    def energy(self):
        """The energy figure the library measured (docs/energy.md), a dict
        as the JSON has it: source ("counter", "sampled_power", None: no
        figure), joules_per_item, items_per_joule, bound (relative), power_w,
        window_ms, idle_power_w, joules_per_item_above_idle, note (why there
        is none)... latency: the device's over the timed runs; throughput:
        the peak batch's; pitfalls: the correct row's; generation: the
        decode window's, per output token; None where the result has none
        (a calibration, a document written before energy)."""
        d = self.data
        if self.kind == "throughput":
            return self.energy_by_batch.get((d.get("peak") or {}).get("batch"))
        if self.kind == "pitfalls":
            return (d.get("energy") or {}).get("correct")
        if self.kind == "generation":
            return d.get("decode_energy")
        return d.get("energy")

    @property
    def cpu_energy(self):
        """latency: the CPU package's energy (RAPL) over the same window, a
        dict as energy is; None elsewhere."""
        return self.data.get("cpu_energy")

    @property
    def joules_per_item(self):
        """energy's joules per input (per token for generation); None
        without a figure."""
        return (self.energy or {}).get("joules_per_item")

    @property
    def items_per_joule(self):
        """energy's inputs (or tokens) per joule; None without a figure."""
        return (self.energy or {}).get("items_per_joule")

    @property
    def energy_by_batch(self):
        """throughput: {batch: that point's energy dict} over the curve
        (the most efficient batch is not always the fastest:
        most_efficient); {} elsewhere."""
        return {p["batch"]: p.get("energy") for p in self.data.get("curve") or [] if "batch" in p}

    @property
    def most_efficient(self):
        """throughput: the batch with the most inputs per joule, a dict
        (batch, items_per_s, items_per_joule); None without energy figures."""
        return self.data.get("most_efficient")

    @property
    def ttft_ms(self):
        """generation: the statistics of the time to first token, a dict."""
        return self.data.get("ttft_ms")

    @property
    def token_ms(self):
        """generation: the statistics of every generated token's latency."""
        return self.data.get("token_ms")

    @property
    def tokens_per_s(self):
        """generation: tokens / the time of all steps (never a mean of rates)."""
        return self.data.get("tokens_per_s")

    def report(self):
        """The text report, with the binding's lines after it."""
        lines = [self.text.rstrip("\n")]
        b = self.data["binding"]
        if b.get("host_overhead_us") is not None:
            lines.append(
                f"binding: python {b['python']}, an empty callable takes {b['host_overhead_us']:.2f} us a run "
                f"through the binding (host clock; {b['plain_call_us']:.2f} us called in a plain loop)"
            )
        lines += [f"warning: {w}" for w in b.get("warnings", [])]
        return "\n".join(lines) + "\n"

    def print(self, file=None):
        (file or sys.stdout).write(self.report())

    def to_json(self):
        return json.dumps(self.data, indent=2, allow_nan=False) + "\n"

    def save_json(self, path):
        """Writes the JSON document (the schema the C program writes)."""
        _write_whole(path, self.to_json())

    def save_html(self, path):
        """Writes the self-contained HTML page (docs/report.md)."""
        if self._html is None:
            raise ValueError(f"a {self.kind} result has no HTML page")
        _write_whole(path, self._html)

    def __repr__(self):
        if self.kind == "latency" and self.latency_ms:
            s = self.latency_ms
            energy = f" {self.joules_per_item:.4g} J/input" if self.joules_per_item is not None else ""
            return (f"<inferbench latency p50={s['p50']:.4f} ms p99={s['p99']:.4f} ms n={s['n']}{energy}"
                    f"{' partial' if self.partial else ''}>")
        if self.kind == "generation" and self.token_ms:
            return (f"<inferbench generation ttft p50={self.ttft_ms['p50']:.4f} ms token p50={self.token_ms['p50']:.4f} ms "
                    f"{self.tokens_per_s:.1f} tokens/s runs={self.data.get('runs')}{' partial' if self.partial else ''}>")
        return f"<inferbench {self.kind} result{' partial' if self.partial else ''}>"


def _write_whole(path, text):
    """Writes text to path through a temporary file beside it and a rename:
    never a half-written file."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".inferbench-")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
