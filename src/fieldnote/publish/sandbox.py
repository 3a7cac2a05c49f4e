"""What a note's template may do: read the evidence through the helpers it is given, branch, loop and format.
A template is code, so it runs in Jinja2's immutable sandbox (no attribute starting with `_`, no call that alters
data), loads nothing outside its own folder, and is held to bounds on what it builds (MAX_NOTE_BYTES, MAX_ITEMS),
on its time (MAX_RENDER_SECONDS) and on the memory it may take (MAX_RENDER_MEMORY): a template that runs past one
is stopped with one error naming it."""
from __future__ import annotations

import contextlib
import os
import re
import resource
import signal
import threading
from pathlib import Path

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

from ..core.errors import PipelineError

# The largest shipped note is 32 KB and renders in under a second: these leave two orders of magnitude.
MAX_NOTE_BYTES = 4 << 20
MAX_ITEMS = 1 << 20  # the longest string or list one `*` may build
MAX_RENDER_SECONDS = 60
MAX_RENDER_MEMORY = 2 << 30  # above what the process had when the render began
# `%` formatting pads to any width in one C call: a width or precision of five digits or more is refused
_WIDE = re.compile(r"%[-+ #0]*(\*|\d{5,}|\d*\.(\*|\d{5,}))")


class Overrun(PipelineError):
    """A template that went past one of the bounds."""


class NoteEnvironment(ImmutableSandboxedEnvironment):
    intercepted_binops = frozenset({"*", "**", "%"})

    def call_binop(self, context, operator, left, right):
        if operator == "*" and _length(left, right) > MAX_ITEMS:
            raise SecurityError(f"a repetition of more than {MAX_ITEMS:,} items")
        if operator == "**" and isinstance(right, int | float) and abs(right) > 4096:
            raise SecurityError("a power above 4096")
        if operator == "%" and isinstance(left, str) and _WIDE.search(left):
            raise SecurityError("a %-format wider than 9999")
        return super().call_binop(context, operator, left, right)


def _length(left, right) -> int:
    sized, count = (left, right) if isinstance(right, int) else (right, left)
    if isinstance(sized, str | list | tuple) and isinstance(count, int):
        return len(sized) * count
    return 0


def environment(folder: Path) -> NoteEnvironment:
    """Includes and imports are read from the template's own folder (the checkout's notes/) and nowhere else."""
    return NoteEnvironment(loader=jinja2.FileSystemLoader(str(folder)), undefined=jinja2.StrictUndefined,
                           keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True, autoescape=False)


@contextlib.contextmanager
def bounds(where: str):
    """The time and memory bounds, around the compile as well as the render: Jinja folds constant expressions
    (a filter over literals) while it compiles."""
    with _deadline(where), _memory_cap():
        yield


def stream(template: jinja2.Template, where: str) -> str:
    """The template's text, counted as it is produced."""
    parts, size = [], 0
    for part in template.generate():
        size += len(part)
        if size > MAX_NOTE_BYTES:
            raise Overrun(f"{where}: the note grows past {MAX_NOTE_BYTES:,} characters: stopped")
        parts.append(part)
    return "".join(parts)


@contextlib.contextmanager
def _deadline(where: str):
    if (threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer")
            or signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, None)):
        yield  # the alarm is not ours to take: the output and memory bounds still hold
        return

    def expire(signum, frame):
        raise Overrun(f"{where}: the template ran past {MAX_RENDER_SECONDS} s: stopped (a loop without end?)")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, MAX_RENDER_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def _memory_cap():
    """The address space the render may add: a template building something huge in one call (a padded format, a
    filter's width) meets a MemoryError instead of the machine's limit."""
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        used = int(Path("/proc/self/statm").read_text().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        yield  # no /proc (not Linux): the other bounds still hold
        return
    cap = used + MAX_RENDER_MEMORY
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    if soft != resource.RLIM_INFINITY and soft <= cap:
        yield
        return
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
