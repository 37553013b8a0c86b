"""MEMOBench: measuring memory in robot manipulation policies.

Importing this package is cheap: it never imports MuJoCo, LIBERO or torch.
The simulator lives behind :mod:`memobench.sim`.
"""

__version__ = "0.1.0"
