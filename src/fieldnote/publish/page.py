"""note.html: the note as one self-contained web page, readable offline. The markdown is converted by
Python-Markdown with raw HTML turned off, so whatever the note quotes from evidence, configuration or an archive
(a GPU's name, a description, a kernel's) is shown as text, never run; links go only to relative paths and
http(s). Each figure the note places is inlined (its SVG as a data URI) with its caption, and the values it draws
(figures/<name>.values.csv) follow it as a table folded under it. Wide tables scroll inside the column, so the
page is never wider than the window. An archive nobody pinned gets its warning from the page itself,
above the note, where nothing the note holds can hide it."""
from __future__ import annotations

import base64
import html
import re
from pathlib import Path
from urllib.parse import urlsplit

import markdown
import pandas as pd
from markdown.extensions import Extension
from markdown.treeprocessors import Treeprocessor

STYLE = """
body { font: 16px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #222;
       overflow-wrap: break-word; }
table { border-collapse: collapse; margin: 1rem 0; font-size: 0.9rem; display: block; max-width: 100%;
        overflow-x: auto; }
pre { overflow-x: auto; }
th, td { border: 1px solid #ccc; padding: 0.2rem 0.5rem; text-align: left; }
th { background: #f3f3f3; }
figure { margin: 1.5rem 0; }
figure img { max-width: 100%; }
figcaption { font-style: italic; margin: 0.3rem 0; }
details { margin: 0.3rem 0 1rem; }
code { background: #f6f6f6; padding: 0 0.2rem; }
"""
WARNING_STYLE = ".unverified { border: 2px solid #b00; background: #fff3f3; padding: 0.5rem 1rem; margin: 1rem 0; }\n"
_IMAGE = re.compile(r'<p><img alt="([^"]*)" src="figures/([A-Za-z0-9_.-]+)\.svg" ?/?></p>\s*'
                    r'(?:<p><em>Figure: [^<]*</em></p>)?')


def values_table(folder: Path, name: str) -> str:
    path = folder / f"{name}.values.csv"
    if not path.is_file():
        return ""
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    return ("<details><summary>The values behind the figure</summary>"
            + frame.to_html(index=False, border=0, escape=True) + "</details>")


def inline_figure(folder: Path, caption: str, name: str) -> str:
    svg = (folder / f"{name}.svg").read_bytes()
    uri = "data:image/svg+xml;base64," + base64.b64encode(svg).decode()
    return (f'<figure id="figure-{name}"><img alt="{caption}" src="{uri}"><figcaption>{caption}</figcaption>'
            f"</figure>{values_table(folder, name)}")


class _Links(Treeprocessor):
    """A link or image whose target is neither a relative path nor http(s) (`javascript:`, `data:`, entities
    spelling either) loses its target and stays as its text."""

    def run(self, root):
        for element in root.iter():
            for attribute in ("href", "src"):
                value = element.get(attribute)
                if value is not None and not _safe(html.unescape(value)):
                    del element.attrib[attribute]


def _safe(url: str) -> bool:
    parts = urlsplit(url.strip())
    return parts.scheme in ("http", "https") if parts.scheme else not parts.netloc


class _TextOnly(Extension):
    """Markdown without raw HTML: a tag in the note is text, an HTML comment too."""

    def extendMarkdown(self, md):  # noqa: N802 (Python-Markdown's name)
        md.preprocessors.deregister("html_block")
        md.inlinePatterns.deregister("html")
        md.treeprocessors.register(_Links(md), "links", 5)


def banner(provenance: dict) -> str:
    return (f'<aside class="unverified" role="alert"><strong>Unverified archive.</strong> This page is rebuilt from '
            f"{html.escape(provenance['archive'])} (SHA-256 <code>{html.escape(provenance['sha256'])}</code>): "
            f"{html.escape(provenance['why'])}. Its note is the generated one: a note template is code, and an "
            "archive's own template is rendered only once a namespace file pins the archive.</aside>")


def render(note_text: str, figures: Path, title: str, provenance: dict | None = None) -> str:
    body = markdown.markdown(note_text, extensions=["tables", "fenced_code", _TextOnly()])
    body = _IMAGE.sub(lambda m: inline_figure(Path(figures), m[1], m[2]), body)
    warning, style = (banner(provenance) + "\n", STYLE + WARNING_STYLE) if provenance else ("", STYLE)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><style>{style}</style></head>'
            f"<body>\n{warning}{body}\n</body></html>\n")
