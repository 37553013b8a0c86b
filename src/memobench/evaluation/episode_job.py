"""One planned episode of a run: its env from the cache, the episode, its videos.

The same function runs an episode in-process (:mod:`memobench.evaluation.runner`)
and in a worker (:mod:`memobench.evaluation.executors`), so both give the same record.
"""

from __future__ import annotations

from memobench.core.records import EpisodeRecord
from memobench.core.suite import Task
from memobench.evaluation.envs import EnvCache
from memobench.evaluation.protocol import EpisodePlan
from memobench.evaluation.run_request import RunRequest
from memobench.evaluation.video import save_episode_videos, wants_video
from memobench.policies.adapter import AdapterGuard


def run_one(
    task: Task, plan: EpisodePlan, envs: EnvCache, guard: AdapterGuard, request: RunRequest, render: bool
) -> EpisodeRecord:
    """One episode on a cached env; videos written if the run asks for them."""
    from memobench.evaluation.episode import env_error_record, run_episode

    try:
        env, build_s = envs.get(task, plan.variant, plan.binding, render, request.protocol.render_quality)
    except Exception as e:  # a scene that cannot be built fails its episodes, not the sweep
        return env_error_record(task, plan, f"building the environment failed: {type(e).__name__}: {e}")
    outcome = run_episode(
        task, plan, env, guard, request.protocol, capture_video=request.video != "none", video_every=request.video_every
    )
    record = outcome.record
    if build_s:
        record = record.model_copy(update={"timings": {**record.timings, "env_build": round(build_s, 4)}})
    if wants_video(request.video, record.success):
        save_episode_videos(request.out_root, record, outcome.frames)
    return record
