"""docs/own_model.md: every python code block runs, in order, in one namespace
(tests/project/test_docs.py checks links and the MkDocs build, not the code)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "own_model.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def python_blocks(page: Path) -> list[str]:
    return BLOCK.findall(page.read_text())


def test_the_guide_has_code():
    assert len(python_blocks(GUIDE)) >= 4


@pytest.mark.slow
def test_every_code_block_of_the_own_model_guide_runs(capsys):
    namespace: dict = {"__name__": "own_model_guide"}
    for k, code in enumerate(python_blocks(GUIDE)):
        exec(compile(code, f"{GUIDE.name}[block {k}]", "exec"), namespace)   # noqa: S102
    out = capsys.readouterr().out
    assert out.count("\n") >= 3
