"""note.html: the note as one self-contained web page, readable offline. The markdown is converted by
Python-Markdown; each figure the note places is inlined (its SVG as a data URI) with its caption, and the values it
draws (figures/<name>.values.csv) follow it as a table."""
from __future__ import annotations

import base64
import html
import re
from pathlib import Path

import markdown
import pandas as pd

STYLE = """
body { font: 16px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
table { border-collapse: collapse; margin: 1rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.2rem 0.5rem; text-align: left; }
th { background: #f3f3f3; }
figure { margin: 1.5rem 0; }
figure img { max-width: 100%; }
figcaption { font-style: italic; margin: 0.3rem 0; }
details { margin: 0.3rem 0 1rem; }
code { background: #f6f6f6; padding: 0 0.2rem; }
"""
_IMAGE = re.compile(r'<p><img alt="([^"]*)" src="figures/([A-Za-z0-9_.-]+)\.svg" ?/?></p>\s*'
                    r'(?:<p><em>Figure: [^<]*</em></p>)?')


def values_table(folder: Path, name: str) -> str:
    path = folder / f"{name}.values.csv"
    if not path.is_file():
        return ""
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    return ("<details open><summary>The values behind the figure</summary>"
            + frame.to_html(index=False, border=0, escape=True) + "</details>")


def inline_figure(folder: Path, caption: str, name: str) -> str:
    svg = (folder / f"{name}.svg").read_bytes()
    uri = "data:image/svg+xml;base64," + base64.b64encode(svg).decode()
    return (f'<figure id="figure-{name}"><img alt="{caption}" src="{uri}"><figcaption>{caption}</figcaption>'
            f"</figure>{values_table(folder, name)}")


def render(note_text: str, figures: Path, title: str) -> str:
    body = markdown.markdown(note_text, extensions=["tables", "fenced_code"])
    body = _IMAGE.sub(lambda m: inline_figure(Path(figures), m[1], m[2]), body)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><style>{STYLE}</style></head>'
            f"<body>\n{body}\n</body></html>\n")
