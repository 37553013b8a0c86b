"""Scripted experts: closed-loop skills on privileged simulator state, one plan per task.

An expert reads the simulator (poses, joints) but acts only through 7-D
OSC_POSE actions, like any policy. What a task asks it to remember (which
drawer, which carton, which order, how many pours) lives in an explicit
:class:`~memobench.experts.expert.Memory`; the memoryless variant clears it
before every decision, which is how certification shows a task needs memory.

Modules: ``scene`` (read-only privileged view), ``control`` (pose-servo
actions), ``skills`` (reach, grasp, place, drawer, pour ... as small state
machines), ``plans`` (one plan per task), ``expert`` (plan runner),
``policy`` (the adapter: action chunks from a forward model of the scene).
"""
