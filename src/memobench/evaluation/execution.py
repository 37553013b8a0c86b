"""How and where a run executes: workers, backend, retries, videos, output folder.

:class:`~memobench.evaluation.protocol.Protocol` says what an episode means;
:class:`Execution` says how the episodes are run and kept, and never changes a
record (apart from timings and retries). Together they are a run's whole
configuration; the command line builds its flags from both models' fields
(name, default, bounds, and the ``description`` as help), so each flag is
defined once, here or in the protocol.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator


class VideoMode(StrEnum):
    NONE = "none"
    FAILURES = "failures"
    ALL = "all"


class Backend(StrEnum):
    LOCAL = "local"
    RAY = "ray"


WORKERS_HELP = (
    "Episodes run in this many worker processes (same results); a policy that kills its process "
    "fails only its episode. 0: in this process (for debuggers; a policy that kills the process "
    "ends the run)."
)


def check_execution(workers: int, episode_timeout: float | None, backend: str, ray_address: str | None) -> None:
    """Raise ValueError, naming the flags, for settings that do not go together."""
    if workers < 0:
        raise ValueError(f"--workers must be 0 (in this process) or more, got {workers}")
    if workers == 0 and episode_timeout:
        raise ValueError("--episode-timeout needs a worker process to kill: use --workers 1 or more")
    if workers == 0 and backend != Backend.LOCAL:
        raise ValueError(f"--backend {backend} needs --workers 1 or more")
    if ray_address and backend != Backend.RAY:
        raise ValueError("--ray-address needs --backend ray")


class Execution(BaseModel):
    """How a run's episodes (or any long job's units) are executed and where results go."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    video: VideoMode = Field(VideoMode.NONE, description="Record videos of no, failed or all episodes.")
    video_every: int = Field(
        0,
        ge=0,
        description=(
            "Videos also get a frame every N steps between policy queries (0: only the frames the policy saw)."
        ),
    )
    out_root: Path | None = Field(None, description="Output folder (default: runs/<policy>-<time>).")
    resume: bool = Field(False, description="Continue the run in --out-root, skipping finished episodes.")
    workers: int = Field(1, ge=0, description=WORKERS_HELP)
    backend: Backend = Field(
        Backend.LOCAL, description=("Where workers run: this machine, or Ray (pip install 'memobench[ray]').")
    )
    ray_address: str | None = Field(
        None, description=("Ray cluster address for --backend ray (default: start a local Ray).")
    )
    episode_timeout: float | None = Field(
        None, ge=1, description=("Seconds an episode may run before its worker counts as hung and is replaced.")
    )
    max_attempts: int = Field(
        3, ge=1, description=("Executions of an episode whose worker dies or hangs (policy errors are never retried).")
    )

    @model_validator(mode="after")
    def _flags_go_together(self) -> Execution:
        check_execution(self.workers, self.episode_timeout, self.backend, self.ray_address)
        return self

    def request_fields(self) -> dict:
        """The :class:`~memobench.evaluation.run_request.RunRequest` keywords this configuration sets."""
        return {
            "video": self.video.value,
            "video_every": self.video_every,
            "resume": self.resume,
            "workers": self.workers,
            "backend": self.backend.value,
            "ray_address": self.ray_address,
            "episode_timeout": self.episode_timeout,
            "max_attempts": self.max_attempts,
        }
