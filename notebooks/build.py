"""Write the teaching notebooks from their sources in ``notebooks/src/``.

Each source is a plain Python file in the "percent" format (as used by
jupytext and VS Code)::

    # %% [markdown]
    # # A title
    # Text of a markdown cell; every line starts with "# ".

    # %%
    # %matplotlib inline          <- a line "# %magic" becomes the magic "%magic"
    x = 1                         <- a code cell

so the sources diff and review like code.
This script writes ``notebooks/<name>.ipynb`` WITHOUT outputs; run
``execute.py`` afterwards to execute them and store the outputs::

    python notebooks/build.py            # all sources
    python notebooks/build.py 02         # only sources whose name contains "02"
    python notebooks/execute.py          # then refresh the outputs
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent
SRC = HERE / "src"

_MARKER = re.compile(r"^# %%(?P<md>\s*\[markdown\])?\s*$")
_MAGIC = re.compile(r"^# (%{1,2}(?!%)\S.*)$")


def _trim(lines: list[str]) -> list[str]:
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


def parse(text: str) -> list:
    """The cells of a percent-format source (text before the first marker is ignored)."""
    cells, kind, buf = [], None, []

    def flush():
        body = _trim(buf)
        if kind == "markdown":
            out = []
            for line in body:
                if line.startswith("# "):
                    out.append(line[2:])
                elif line.rstrip() == "#":
                    out.append("")
                else:
                    raise ValueError(f"markdown line does not start with '# ': {line!r}")
            cells.append(new_markdown_cell("\n".join(out)))
        elif kind == "code" and body:
            cells.append(new_code_cell("\n".join(_MAGIC.sub(r"\1", line) for line in body)))

    for line in text.splitlines():
        m = _MARKER.match(line)
        if m:
            flush()
            kind, buf = ("markdown" if m.group("md") else "code"), []
        elif kind is not None:
            buf.append(line)
    flush()
    return cells


def build(source: Path) -> Path:
    nb = new_notebook(cells=parse(source.read_text()))
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nb.metadata["language_info"] = {"name": "python"}
    target = HERE / (source.stem + ".ipynb")
    nbformat.validate(nb)
    nbformat.write(nb, target)
    return target


def main(argv: list[str]) -> int:
    sources = sorted(SRC.glob("[0-9]*.py"))
    if argv:
        sources = [s for s in sources if any(a in s.name for a in argv)]
    for source in sources:
        print(f"wrote {build(source).relative_to(HERE.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
