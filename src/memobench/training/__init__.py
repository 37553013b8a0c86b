"""Training learned memory policies on MEMOBench's demonstrations (the ``train`` extra: torch).

Above ``data`` in the layers (docs/design.md, "Layers"): it reads the HDF5 demos, the core's
oracle text and the simulator's visibility rule, and reports progress through
:class:`~memobench.evaluation.run_events.RunEvents`. ``memobench train`` drives it; a trained
checkpoint evaluates as the built-in policy ``checkpoint``
(:mod:`memobench.training.checkpoint_policy`). Importing this package imports nothing heavy;
each module imports torch itself.
"""
