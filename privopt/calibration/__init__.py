"""Noise scales and utility bounds: one function per quantity, each citing
its source.  Mechanisms call these and nothing else to size their noise.

[NRVW20] Neel, Roth, Vietri, Wu. Oracle Efficient Private Non-Convex
Optimization. ICML 2020 (arXiv:1909.01783).
"""

from ._opdisc import opdisc_sigma, opdisc_utility_bound

__all__ = ["opdisc_sigma", "opdisc_utility_bound"]
