"""Missing optional packages give "pip install privopt[extra]" (issue 16 item 5)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from privopt._optional import EXTRAS, require

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("module", sorted(EXTRAS))
def test_require_names_the_extra(monkeypatch, module):
    monkeypatch.setitem(sys.modules, module, None)  # import of this module now fails
    with pytest.raises(ImportError, match=rf"pip install privopt\[{EXTRAS[module][0]}\]"):
        require(module)


def _run_without(module: str, code: str) -> subprocess.CompletedProcess:
    prog = f"import sys; sys.modules[{module!r}] = None\n" + textwrap.dedent(code)
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize("code", ["from privopt.estimators import PrivateHalfspaceClassifier",
                                  "from privopt.baselines import DPSGDLogisticRegression"])
@pytest.mark.slow
def test_estimators_without_sklearn(code):
    out = _run_without("sklearn", code)
    assert out.returncode != 0
    assert "pip install privopt[learn]" in out.stderr.strip().splitlines()[-1]


@pytest.mark.slow
def test_privopt_imports_without_sklearn():
    out = _run_without("sklearn", "import privopt; print(privopt.opdisc.__name__)")
    assert out.returncode == 0, out.stderr


def test_accounting_without_dp_accounting(monkeypatch):
    from privopt.baselines import _accounting
    monkeypatch.setitem(sys.modules, "dp_accounting", None)
    with pytest.raises(ImportError, match=r"pip install privopt\[learn\]"):
        _accounting.analytic_gaussian_sigma(1.0, 1e-5, 1.0)


def test_plots_without_matplotlib(monkeypatch):
    from privopt.experiments import plots
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r"pip install privopt\[plot\]"):
        plots._plt()
