"""Authored notes: a namespace's `note:` names a Jinja2 template of prose written by the note's author, and every
number in it is an expression over the bundle's tables (`Evidence`), rounded as the tables round it. Comparisons
are claims, judged against the noise when the note renders; a false claim stops the note. A numeral typed into the
prose is refused (`typed_numerals`)."""
from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import jinja2
import pandas as pd
from jinja2 import nodes
from jinja2.sandbox import SecurityError

from ..core.errors import PipelineError
from ..evidence.measurements import compare
from ..registry.subjects import adopted
from ..registry.vocabulary import HAND_WRITTEN, IMPLEMENTATIONS, MEASURED, OP_TITLES, hand_written, us
from . import note as tables_of
from . import verdicts
from .sandbox import MAX_RENDER_MEMORY, bounds, environment, stream

# --- numbers ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Number:
    """One value a reader sees: its value, the text its table shows, where it came from and the interval of its
    noise (a point where none is known). Numbers do not compare with `<`: a comparison is a claim."""

    value: float
    text: str
    source: str
    low: float | None = None
    high: float | None = None
    quoted: str | None = None  # the provenance of a value quoted from elsewhere, not measured here

    def __str__(self) -> str:
        return self.text + (QUOTED_MARK if self.quoted else "")

    def __float__(self) -> float:
        return float(self.value)

    @property
    def interval(self) -> tuple[float, float]:
        return (self.value if self.low is None else self.low, self.value if self.high is None else self.high)


QUOTED_MARK = "†"


def number(value, text: str, source: str, low=None, high=None, quoted=None) -> Number:
    if value is None or pd.isna(value):
        raise PipelineError(f"{source}: the evidence has no value")
    return Number(float(value), text, source, None if pd.isna(low) else low, None if pd.isna(high) else high, quoted)


def spread(values, text=None) -> Number:
    """The range of several numbers ("a–b"), as one number whose interval is that range."""
    values = list(values)
    low, high = min(values, key=float), max(values, key=float)
    shown = text or f"{low.text}–{high.text}"
    quoted = "; ".join(dict.fromkeys(v.quoted for v in values if v.quoted)) or None
    return Number(float(high), shown, "range of " + ", ".join(v.source for v in values), low.interval[0],
                  high.interval[1], quoted)


def listed(values, last="and") -> str:
    """"a, b and c", each as its table shows it."""
    values = [str(v) for v in values]
    return values[0] if len(values) == 1 else f"{', '.join(values[:-1])} {last} {values[-1]}"


# --- claims ----------------------------------------------------------------------------------------------------

RELATIONS = {"<": "below", ">": "above", "~": "not distinguishable"}
# The generated tables that make verdicts (verdicts.judged), and the kind their rows have in the claims table.
JUDGED = {"targets": "target", "predictions": "prediction"}


def judge(left: Number, right: Number) -> tuple[str, float]:
    """below, above or not distinguishable, and the margin: how far apart the two intervals are (negative where
    they overlap)."""
    return compare(left.interval, right.interval)


@dataclass
class Claims:
    """Every claim and every branch a note's template judged, in order: the `claims` evidence table."""

    template: str  # the file rendered, whose lines the claims are on
    name: str = ""  # how the namespace names it, recorded in the table
    rows: list[dict] = field(default_factory=list)
    judged: dict[str, pd.DataFrame] = field(default_factory=dict)  # the generated tables' verdicts (verdicts.judged)

    def record(self, kind: str, text: str, left: Number, relation: str, right: Number) -> str:
        verdict, margin = judge(left, right)
        self.rows.append({"file": self.name or self.template, "line": template_line(self.template), "kind": kind,
                          "claim": text, "key": None,
                          "left": left.source, "left_value": left.value, "left_low": left.interval[0],
                          "left_high": left.interval[1], "relation": relation, "right": right.source,
                          "right_value": right.value, "right_low": right.interval[0],
                          "right_high": right.interval[1], "verdict": verdict, "margin": margin,
                          "relative_margin": float("nan"), "holds": verdict == RELATIONS[relation]})
        return verdict

    def placed(self, table: str) -> None:
        """A generated table placed in the note: its verdicts (a target's, a prediction's), each judged on the
        unrounded value with its margin, recorded where it is placed, once."""
        frame = self.judged.pop(table, None)
        if frame is not None:
            where = {"file": self.name or self.template, "line": template_line(self.template), "kind": JUDGED[table]}
            self.rows += [{**where, **row} for row in frame.to_dict("records")]

    def claim(self, text: str, left: Number, relation: str, right: Number) -> str:
        if relation not in RELATIONS:
            raise PipelineError(f"{self.template}: line {template_line(self.template)}: claim {text!r}: relation "
                                f"{relation!r} is not one of {', '.join(RELATIONS)}")
        verdict = self.record("claim", text, left, relation, right)
        if verdict != RELATIONS[relation]:
            row = self.rows[-1]
            raise PipelineError(
                f"{self.template}: line {row['line']}: claim {text!r} is false: {left.source} = {left} "
                f"[{_g(row['left_low'])}, {_g(row['left_high'])}] is {verdict} {right.source} = {right} "
                f"[{_g(row['right_low'])}, {_g(row['right_high'])}], not {RELATIONS[relation]}")
        return ""

    def verdict(self, text: str, left: Number, right: Number) -> str:
        return self.record("branch", text, left, "~", right)

    def claimed(self, text: str, left: Number, relation: str, right: Number, caller) -> str:
        """`{% call claimed(text, a, "<", b) %}prose{% endcall %}`: the prose, which the claim covers."""
        self.claim(text, left, relation, right)
        return caller()

    def table(self, namespace: str) -> pd.DataFrame:
        columns = ["file", "line", "kind", "claim", "key", "left", "left_value", "left_low", "left_high", "relation",
                   "right", "right_value", "right_low", "right_high", "verdict", "margin", "relative_margin", "holds"]
        frame = pd.DataFrame(self.rows, columns=columns)
        frame.insert(0, "namespace", namespace)
        return frame.astype({"line": "int64", "holds": "bool"})


def _g(value: float) -> str:
    return f"{value:.4g}"


def template_line(template: str) -> int:
    """The line of the template being rendered: Jinja compiles a template to code whose file name is the
    template's, and maps that code's lines back to the template's."""
    frame = sys._getframe()
    while frame is not None:
        if frame.f_code.co_filename == template:
            compiled = frame.f_globals.get("__jinja_template__")
            return compiled.get_corresponding_lineno(frame.f_lineno) if compiled else frame.f_lineno
        frame = frame.f_back
    return 0


# --- typed numerals --------------------------------------------------------------------------------------------

# A numeral in prose passes only inside an identifier: a word that holds a letter and is neither a number
# (1e-7), a shape (4x4, 1024x768) nor a measure or a count (46us, 1.05x, 6.22-us, 76%, 256-thread), such as
# sm_90, mage-006, 3xTF32, 128-bit, H200; after `#` (an issue or pull request); or inside `backticks` as code, not
# as a number or a measure set in code type. Every other numeral is a number typed by hand.
_WORD = re.compile(r"[#\w.+%-]*\d[\w.+%-]*")
_CODE = re.compile(r"`([^`\n]*)`")
_SHAPE = re.compile(r"\d+(x\d+)+")
_UNITS = ("us|µs|ns|ms|s|x|×|%|b|kb|mb|gb|kib|mib|gib|gbs|gb/s|tb/s|flops|tflops|tflop/s|gflops|ghz|mhz|w"
          # a count glued to what it counts is a count too (256-thread, 64-deep); 128-bit, 16-byte name a width
          "|threads?|deep|wide|warps?|rows?|columns?|elements?|lanes?|blocks?|stages?|floats?|registers?")
_MEASURE = re.compile(rf"\d+(?:\.\d+)?(?:e[+-]?\d+)?-?(?:{_UNITS})", re.IGNORECASE)


def typed_numerals(text: str) -> list[str]:
    found = [code for code in _CODE.findall(text) if _numeric(code.strip())]
    for word in _WORD.findall(_CODE.sub(" ", text)):
        word = word.strip(".+-")
        if not word or word.startswith("#") or not any(c.isdigit() for c in word):
            continue
        if _numeric(word) or not re.search(r"[A-Za-z_]", word):
            found.append(word)
    return found


def _numeric(word: str) -> bool:
    """A number, a shape or a measure: what a word is when it is a value, not a name."""
    return bool(word) and (_is_number(word) or bool(_SHAPE.fullmatch(word) or _MEASURE.fullmatch(word)))


def _is_number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True


def refuse_typed(text: str, where: str, first_line: int = 1) -> None:
    """One error naming the file, line and number of the first numeral typed into `text`."""
    for offset, line in enumerate(text.splitlines()):
        found = typed_numerals(line)
        if found:
            raise PipelineError(f"{where}: line {first_line + offset}: the number {found[0]!r} is typed by hand; a "
                                "number in a note comes from the evidence, through an expression")


def refuse_typed_prose(namespace_file: str, description: str | None, progression: dict | None,
                       targets: dict | None, attempts=()) -> None:
    """The namespace file's prose a note prints (description, the progression's changes, what limits each miss,
    why an attempt was not adopted) holds no number typed by hand: one error naming file and key."""
    prose = {"description": description or "",
             **{f"attempts.{i}.why": a["why"] for i, a in enumerate(attempts or ()) if a.get("why")},
             **{f"progression.changes.{k}": v for k, v in ((progression or {}).get("changes") or {}).items()},
             **{f"targets.limits.{k}": v for k, v in ((targets or {}).get("limits") or {}).items()}}
    for key, text in prose.items():
        refuse_typed(" ".join(str(text).split()), f"{namespace_file}: key '{key}'")


def refuse_typed_in_template(source: str, path: str, environment: jinja2.Environment) -> None:
    """The template's text outside its tags (what Jinja's lexer calls data) holds no typed numeral."""
    for line, kind, value in environment.lex(source):
        if kind == "data":
            refuse_typed(value, path, line)


# --- comparative words ----------------------------------------------------------------------------------------

# Words that compare or explain one measurement by another. In a template's text they stand only where the evidence
# decided them: in the branches of an `{% if %}` whose test is a verdict (`{% set v = verdict(...) %}`), in the
# text a claim covers (`{% call claimed(...) %}`), or in the original project's account (`{% call history() %}`),
# which the note marks as the original's. The list grows with use (docs/notes.md prints it).
COMPARATIVE = ("faster", "slower", "quicker", "ahead", "behind", "beats", "beat", "outperforms", "better", "worse",
               "steadier", "as steady", "stable", "settles", "settled", "settle", "follows", "near the", "close to",
               "bound by", "bounded by", "bounds", "limited by", "lies above", "lies below", "is above", "is below",
               "longer", "shorter", "matches", "stayed put", "lost to", "wins", "under load", "moved")
CLAIM_TEXT = ("verdict", "claim", "claimed")  # the helpers whose first argument says what is compared
_COMPARES = re.compile(r"\b(" + "|".join(w.replace(" ", r"\s+") for w in COMPARATIVE) + r")\b", re.IGNORECASE)


def refuse_unjudged(source: str, path: str, env: jinja2.Environment) -> None:
    """A comparative word in the template's text outside a verdict's branches or the original's history: one error
    naming file, line and word."""
    tree = env.parse(source)
    verdicts_of = {a.target.name for a in tree.find_all(nodes.Assign)
                   if isinstance(a.target, nodes.Name) and _calls(a.node, "verdict")}
    _unjudged(tree, path, verdicts_of, judged=False)


def _unjudged(node: nodes.Node, path: str, verdicts_of: set[str], judged: bool) -> None:
    if isinstance(node, nodes.If) and (_calls(node.test, "verdict")
                                       or any(n.name in verdicts_of for n in node.test.find_all(nodes.Name))):
        judged = True
    if isinstance(node, nodes.CallBlock) and (_calls(node.call, "history") or _calls(node.call, "claimed")):
        judged = True
    if isinstance(node, nodes.Call) and isinstance(node.node, nodes.Name) and node.node.name in CLAIM_TEXT:
        return  # a claim's or a verdict's own text names what it compares
    text = node.data if isinstance(node, nodes.TemplateData) else node.value if (
        isinstance(node, nodes.Const) and isinstance(node.value, str)) else None  # prose, or a string in an expression
    if text is not None and not judged:
        found = _COMPARES.search(text)
        if found:
            line = node.lineno + text[:found.start()].count("\n")
            raise PipelineError(f"{path}: line {line}: {found.group(0)!r} compares, outside a claim or a verdict: "
                                "word it in the branches of {% if v == ... %} over {% set v = verdict(...) %}, cover "
                                "it with {% call claimed(...) %}, or mark the original's account with "
                                "{% call history() %}")
    for child in node.iter_child_nodes():
        _unjudged(child, path, verdicts_of, judged)


def _calls(node: nodes.Node, name: str) -> bool:
    return any(isinstance(c.node, nodes.Name) and c.node.name == name
               for c in ([node] if isinstance(node, nodes.Call) else []) + list(node.find_all(nodes.Call)))


# --- the evidence, as a template reads it ----------------------------------------------------------------------


class Evidence:
    """The helpers a template calls. Each returns a Number (or text) read from one table as that table rounds it;
    `ns` names another namespace of the note's history (its summary and kernels travel in the bundle)."""

    def __init__(self, namespace: str, tables: dict[str, pd.DataFrame], environment: dict,
                 history: dict[str, dict[str, pd.DataFrame]], config: dict):
        self.namespace, self.tables, self.environment = namespace, tables, environment
        self.history = {**history, namespace: tables}
        self.config = config

    # which evidence
    def _table(self, name: str, ns: str | None) -> pd.DataFrame:
        ns = ns or self.namespace
        found = self.history.get(ns, {}).get(name)
        if found is None:
            raise PipelineError(f"the note asks for table {name!r} of namespace {ns!r}, which the bundle does not hold")
        return found

    def mine(self, ns: str | None = None) -> str:
        return hand_written(self._table("summary", ns))

    def _row(self, op: str, impl: str | None, ns: str | None) -> pd.Series:
        summary = self._table("summary", ns)
        impl = impl or self.mine(ns)
        rows = summary[(summary["op"] == op) & (summary["implementation"] == impl)]
        if rows.empty:
            raise PipelineError(f"summary of {ns or self.namespace}: no row for {op} / {impl}")
        return rows.iloc[0]

    def _name(self, op, impl, ns, what) -> str:
        return f"{ns or self.namespace}: {what} of {op} / {impl or self.mine(ns)}"

    # the summary
    def kernel(self, op: str, impl: str | None = None, ns: str | None = None) -> Number:
        r = self._row(op, impl, ns)
        return number(r["kernel_us"], us(r["kernel_us"]), self._name(op, impl, ns, "kernel time"),
                      r.get("kernel_low_us"), r.get("kernel_high_us"))

    def cold(self, op: str, impl: str | None = None, ns: str | None = None) -> Number:
        """The kernel time with L2 flushed before each call (capture.cache)."""
        r = self._row(op, impl, ns)
        return number(r["kernel_cold_us"], us(r["kernel_cold_us"]), self._name(op, impl, ns, "cold kernel time"),
                      r.get("kernel_cold_low_us"), r.get("kernel_cold_high_us"))

    def ceiling(self, op: str, cache: str = "warm", ns: str | None = None) -> Number:
        """The fastest copy of the op's traffic timed beside it (the ceilings table): its memory floor."""
        from ..evidence.floors import best

        c = best(self._table("ceilings", ns)).loc[(op, cache)]
        return number(c["kernel_us"], us(c["kernel_us"]), f"{ns or self.namespace}: {op} ceiling ({cache})",
                      c["kernel_low_us"], c["kernel_high_us"])

    def span(self, op: str, impl: str | None = None, ns: str | None = None) -> Number:
        r = self._row(op, impl, ns)
        return number(r["span_mean_us"], us(r["span_mean_us"]), self._name(op, impl, ns, "mean span"),
                      r.get("span_round_min_us"), r.get("span_round_max_us"))

    def launches(self, op: str, impl: str | None = None, ns: str | None = None) -> Number:
        r = self._row(op, impl, ns)
        return number(r["launches"], str(int(r["launches"])), self._name(op, impl, ns, "launches per iteration"))

    # the captures
    def band(self, op: str, impl: str | None = None) -> Number:
        """The range of an implementation's captures (the control band)."""
        cs = self._table("capture_summary", None)
        values = cs[(cs["op"] == op) & (cs["subject"] == (impl or self.mine()))]["kernel_us_per_iteration"]
        what = self._name(op, impl, None, "captures")
        return spread([number(v, us(v), what) for v in values])

    def count(self, what: str) -> Number:
        """captures (of one implementation by one backend in one cache state), samples, rounds or iterations (per
        round) of the span timing, captured iterations, or the checks that passed."""
        spans, cs = self._table("spans", None), self._table("capture_summary", None)
        eager = spans[spans["mode"] == "eager"]
        one = [c for c in ("op", "subject", "backend", "cache") if c in cs]  # as the control band counts
        values = {"captures": lambda: cs.groupby(one).size().max(),
                  "all_captures": lambda: len(cs[cs["backend"] == cs["backend"].iloc[0]]),
                  "samples": lambda: eager.groupby(["op", "subject"]).size().min(),
                  "rounds": lambda: eager["round"].nunique(),
                  "iterations": lambda: eager.groupby(["op", "subject", "round"]).size().min(),
                  "captured_iterations": lambda: cs["iterations"].iloc[0],
                  "checks": lambda: int(self._table("checks", None)["passed"].sum())}
        if what not in values:
            raise PipelineError(f"count({what!r}): not one of {', '.join(values)}")
        return number(values[what](), str(int(values[what]())), f"{self.namespace}: {what}")

    # the kernels' resources
    def resource(self, op: str, what: str, ns: str | None = None) -> Number | str:
        """registers, shared_bytes, blocks (the grid's size), threads (per block), kernel, grid or block of the
        hand-written kernel of an op, as the capture recorded its launch."""
        kernels = self._table("kernels", ns)
        rows = adopted(kernels)
        rows = rows[(rows["op"] == op) & rows["implementation"].isin(HAND_WRITTEN)]
        if rows.empty:
            raise PipelineError(f"kernels of {ns or self.namespace}: no hand-written kernel for {op}")
        r = rows.iloc[0]
        size = lambda dims: math.prod(int(d) for d in str(dims).split(","))  # noqa: E731
        where = self._name(op, None, ns, what)
        if what in ("kernel", "grid", "block"):
            return str(r[what])
        value = {"registers": lambda: r["registers"], "shared_bytes": lambda: r["shared_bytes"],
                 "blocks": lambda: size(r["grid"]), "threads": lambda: size(r["block"])}[what]()
        return number(value, str(int(value)), where)

    def error(self, op: str, impl: str | None = None) -> Number:
        """The largest absolute error of an implementation's checks."""
        checks = self._table("checks", None)
        impl = impl or self.mine()
        value = checks[(checks["op"] == op) & (checks["subject"] == impl)]["max_abs_error"].max()
        return number(value, "0.0" if value == 0 else f"{value:.2g}", self._name(op, impl, None,
                                                                                   "largest absolute error"))

    def tolerance(self, which: str = "rtol") -> Number:
        value = self._table("checks", None)[which].max()
        return number(value, f"{value:g}", f"{self.namespace}: {which}")

    def counter(self, op: str, name: str) -> Number:
        """An Nsight Compute counter of the hand-written kernel, as the counters table shows it."""
        table = self._table("counters", None)
        values = table[(table["op"] == op) & (table["name"] == name)]["value"]
        title, fmt = tables_of.COUNTERS[name]
        value = values.median()
        text = fmt(value) if callable(fmt) else fmt.format(value) + tables_of.out_of_range(fmt, value)
        return number(value, text, f"{self.namespace}: {title} of {op}")

    def largest(self, op: str, impl: str | None = None, what: str = "kernel_us") -> Number | str:
        """An implementation at the op's largest sweep point (the most bytes): its kernel_us, achieved_gbs,
        achieved_tflops or fraction_of_roof, as the sweep table shows it; `shape` gives the point itself."""
        table = self._table("sweep", None)
        points = verdicts.largest_points(table, op)
        if what == "shape":
            return str(points["shape"].iloc[0])
        rows = points[points["implementation"] == (impl or self.mine())]
        if rows.empty or pd.isna(rows[what].iloc[0]):
            raise PipelineError(f"sweep of {self.namespace}: no {what} for {op} / {impl or self.mine()}")
        value = rows[what].iloc[0]
        text = {"kernel_us": us, "achieved_gbs": "{:.0f}".format, "achieved_tflops": "{:.1f}".format,
                "fraction_of_roof": "{:.0%}".format}[what](value)
        return number(value, text, self._name(op, impl, None, f"{what} at the largest sweep point"))

    def census_value(self, op: str, column: str, arch: str | None = None) -> Number | str:
        """A column of the census of an op's Triton kernel (the first arch, or `arch`)."""
        census = self._table("census", None)
        rows = census[(census["op"] == op) & ((census["arch"] == arch) if arch else True)]
        if rows.empty:
            raise PipelineError(f"census of {self.namespace}: no row for {op} at {arch or 'any arch'}")
        value = rows[column].iloc[0]
        if isinstance(value, str):
            return value
        return number(value, str(int(value)), f"{self.namespace}: census {column} of {op}")

    def clock(self, column: str) -> Number:
        """The range over the measurement's blocks of one gpu_state column (sm_clock_mhz, memory_clock_mhz,
        temperature_c, power_w), whole numbers."""
        values = self._table("gpu_state", None)[column].dropna()
        found = [number(v, f"{v:.0f}", f"{self.namespace}: {column}") for v in (values.min(), values.max())]
        return found[0] if found[0].text == found[1].text else spread(found)

    def has_environment(self, key: str) -> bool:
        return key in self.environment

    def environment_value(self, key: str) -> str:
        if key not in self.environment:
            raise PipelineError(f"environment.json of {self.namespace}: no key {key!r}")
        return str(self.environment[key])

    # quoted from elsewhere
    def quoted(self, key: str) -> Number | list[Number]:
        """A value the namespace's declared quotations hold (evidence/quoted.parquet), marked as quoted."""
        table = self._table("quoted", None)
        rows = table[table["key"] == key]
        if rows.empty:
            raise PipelineError(f"quoted of {self.namespace}: no quotation {key!r}")
        found = [number(r.value, f"{r.value:.{int(r.decimals)}f}{'%' if r.unit == '%' else ''}", f"quoted {key}",
                        quoted=r.provenance)
                 for r in rows.itertuples()]
        return found[0] if len(found) == 1 else found

    def history_of(self, caller) -> str:
        """`{% call history() %}prose{% endcall %}`: what the original project did or concluded, told in our words and
        marked as its account, with the source its quotations name."""
        table = self._table("quoted", None)
        source = re.match(r"(.*?) \((.*?),", table["provenance"].iloc[0])
        if source is None:
            raise PipelineError(f"quoted of {self.namespace}: the provenance names no source file")
        return f"*From {source.group(1)} (`{source.group(2)}`):* {caller().strip()}\n"  # its line ends here

    # derived
    @staticmethod
    def ratio(a: Number, b: Number) -> Number:
        """a / b, two decimals: a speed-up or a fraction of a peer."""
        return number(float(a) / float(b), f"{float(a) / float(b):.2f}", f"{a.source} / {b.source}")

    @staticmethod
    def movement(a: Number, b: Number, decimals: int = 1) -> Number:
        """How far b lies from a, in percent of a: shown from the values as shown (a reader can redo it), judged in
        a claim on the unrounded values."""
        shown = (float(b.text) - float(a.text)) / float(a.text) * 100
        return number((float(b) - float(a)) / float(a) * 100, f"{shown:.{decimals}f}%",
                      f"movement {a.source} -> {b.source}")

    @staticmethod
    def gap(a: Number, b: Number) -> Number:
        """How much longer a is than b, in whole percent of b."""
        value = (float(a) / float(b) - 1) * 100
        return number(value, f"{value:.0f}%", f"{a.source} over {b.source}")


# --- rendering -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rendered:
    text: str
    claims: pd.DataFrame


def render(template: Path, evidence: Evidence, generated: dict, figures: dict[str, str],
           name: str | None = None, judged: dict[str, pd.DataFrame] | None = None,
           words: dict | None = None) -> Rendered:
    """`generated`: the note's generated tables and sections by name (markdown); `figures`: each figure's
    caption by name; `name`: the template as the namespace names it (a replay may read the archive's copy), which
    the claims table records; `judged`: the verdicts of the generated tables that make them (verdicts.judged), recorded
    with the claims where the template places their table; `words`: the generated note's worded sections
    (note.words), whose template is a paragraph a section, an empty one leaving no trace. The template's numerals
    are checked before it renders."""
    template = Path(template)
    env = environment(template.parent)
    env.filters["kernel_of"] = lambda ns, op, impl=None: evidence.kernel(op, impl, ns)  # stages | map(...)
    source = template.read_text()
    refuse_typed_in_template(source, str(template), env)
    refuse_unjudged(source, str(template), env)
    claims = Claims(str(template), name or str(template), judged=dict(judged or {}))
    placed = []

    def table(name: str) -> str:
        if name not in generated:
            raise PipelineError(f"{template}: line {template_line(str(template))}: no generated table {name!r} "
                                f"(there are: {', '.join(sorted(generated))})")
        claims.placed(name)
        return generated[name]

    def figure(name: str, caption: str | None = None) -> str:
        if name not in figures:
            raise PipelineError(f"{template}: line {template_line(str(template))}: no figure {name!r} (there are: "
                                f"{', '.join(sorted(figures))})")
        placed.append(name)
        return tables_of.place_figure(name, caption or figures[name])

    imported = not set(evidence.tables["summary"]["implementation"]) <= set(MEASURED)
    ops_here = set(evidence.tables["summary"]["op"])
    helpers = {name: getattr(evidence, name) for name in (
        "kernel", "cold", "ceiling", "span", "launches", "band", "count", "resource", "error", "tolerance", "counter",
        "quoted", "largest", "census_value", "clock", "has_environment", "ratio", "movement", "gap", "mine")}
    helpers.update(
        env_value=evidence.environment_value, spread=spread, listed=listed, table=table, figure=figure,
        claim=claims.claim, verdict=claims.verdict, claimed=claims.claimed, history=evidence.history_of,
        has=lambda name: name in evidence.tables,
        has_table=lambda name: name in generated, namespace=evidence.namespace,
        library_peers=lambda: tables_of.libraries(evidence.tables["summary"], evidence.environment).strip(),
        past_compute_roof=lambda: tables_of.past_compute_roof(evidence.tables.get("sweep")),
        op_title={op: title for op, title in OP_TITLES.items() if op in ops_here},
        impl_title=IMPLEMENTATIONS, config=evidence.config,
        stages=list((evidence.config.get("progression") or {}).get("namespaces", [])),
        verification=lambda: tables_of.verification(evidence.tables["spans"], imported),
        sanitizer=lambda: tables_of.sanitizer_summary(evidence.tables["sanitizer"]))
    helpers.update(words or {})
    try:
        with bounds(str(template)):
            text = stream(_with_filename(env, source, template, helpers), str(template))
    except jinja2.TemplateNotFound as e:
        raise PipelineError(f"{template}: line {template_line_of_error(e, str(template))}: no template {e.name!r} "
                            f"in {template.parent} (a note includes only files of its own folder)") from None
    except SecurityError as e:  # what a template may not do: one line, and nothing was run
        line = getattr(e, "lineno", None) or template_line_of_error(e, str(template))
        raise PipelineError(f"{template}: line {line}: refused by the sandbox: {e.message}") from None
    except jinja2.TemplateError as e:
        line = getattr(e, "lineno", None) or template_line_of_error(e, str(template))
        raise PipelineError(f"{template}: line {line}: {e.message}" if line else f"{template}: {e}") from None
    except PipelineError as e:  # a helper's: the evidence lacks what the template asks for
        if str(e).startswith(f"{template}:"):
            raise
        raise PipelineError(f"{template}: line {template_line_of_error(e, str(template))}: {e}") from None
    except RecursionError:
        raise PipelineError(f"{template}: recurses without end (a macro calling itself, an include of itself)"
                            ) from None
    except MemoryError:
        raise PipelineError(f"{template}: takes more memory than a note may ({MAX_RENDER_MEMORY >> 30} GiB): "
                            "stopped") from None
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, ZeroDivisionError) as e:  # the template's
        raise PipelineError(f"{template}: line {template_line_of_error(e, str(template))}: {type(e).__name__}: "
                            f"{e}") from None
    missing = [name for name in figures if name not in placed]
    if missing:
        raise PipelineError(f"{template}: places no figure {missing[0]!r}: every figure of the namespace has its "
                            "place in the note (figure(name, caption))")
    if words is not None:
        text = re.sub(r"\n{3,}", "\n\n", text).strip("\n") + "\n"
    if QUOTED_MARK in text:
        text += ("\n" + QUOTED_MARK + " Quoted, not measured: the value comes from the namespace's declared "
                 "quotations (evidence/quoted.parquet), whose provenance each row names.\n")
    return Rendered(text, claims.table(evidence.namespace))


GENERATED = Path(__file__).parent / "templates" / "generated.md"


def generated_note(namespace: str, description: str, environment: dict, tables: dict[str, pd.DataFrame],
                   history: dict | None = None, roofline: tuple[dict, dict] | None = None,
                   targets: dict | None = None, provenance: dict | None = None, figures: dict | None = None,
                   predictions: tuple[dict, ...] = (), made: dict[str, str] | None = None) -> str:
    """The note of a namespace that names no template: templates/generated.md, every generated table where the
    evidence has it (note.generated, or `made`), rendered by the same engine as an authored note. The arguments
    are note.words'; `predictions`: the namespace's, each set against its outcome."""
    if made is None:
        made = tables_of.generated(namespace, tables, history, roofline, targets, predictions)
    said = tables_of.words(namespace, description, environment, tables, made, history, roofline, targets,
                           provenance, figures)
    evidence = Evidence(namespace, tables, environment, {}, {})
    return render(GENERATED, evidence, made, figures or {}, words=said).text


def _with_filename(env: jinja2.Environment, source: str, path: Path, helpers: dict) -> jinja2.Template:
    """A template compiled under its own path, so that claims and errors can name its lines."""
    code = env.compile(source, name=path.name, filename=str(path))
    return env.template_class.from_code(env, code, env.make_globals(helpers))


def history_tables(history: dict[str, pd.DataFrame]) -> dict[str, dict[str, pd.DataFrame]]:
    """{'<ns>.summary': frame, ...} (the bundle's evidence/history) as {ns: {'summary': frame, ...}}."""
    found: dict[str, dict[str, pd.DataFrame]] = {}
    for key, frame in history.items():
        ns, table = key.rsplit(".", 1)
        found.setdefault(ns, {})[table] = frame
    return found


def template_line_of_error(error: Exception, template: str) -> int | None:
    """The template line an error was raised at, from its traceback (Jinja maps undefined names there)."""
    tb, line = error.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == template:
            compiled = tb.tb_frame.f_globals.get("__jinja_template__")
            line = compiled.get_corresponding_lineno(tb.tb_lineno) if compiled else tb.tb_lineno
        tb = tb.tb_next
    return line

