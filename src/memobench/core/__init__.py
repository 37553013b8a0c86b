"""The simulator-free core every other layer builds on.

The task model (:mod:`~memobench.core.spec`, :mod:`~memobench.core.bindings`,
:mod:`~memobench.core.bddl_names`, :mod:`~memobench.core.suite`,
:mod:`~memobench.core.suite_counts`, :mod:`~memobench.core.seeding`), the predicate
language (:mod:`~memobench.core.expr`) and vocabulary
(:mod:`~memobench.core.predicates`), the checkpoint tracker
(:mod:`~memobench.core.tracker`), the episode records (:mod:`~memobench.core.records`)
and the failure taxonomy (:mod:`~memobench.core.taxonomy`).

Nothing here imports a simulator (MuJoCo, robosuite, LIBERO), torch, or any other
``memobench`` package: the layers above (``sim``, ``policies``/``experts``,
``evaluation``, ``metrics``, ``data``/``report``, ``cli``) import it, never the reverse.
"""
