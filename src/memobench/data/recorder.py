"""What one demonstration keeps while its episode runs (camera-free).

The episode loop calls :meth:`DemoRecorder.begin` once the policy is about to
act (after the cue and the stabilisation steps) and :meth:`DemoRecorder.add`
before every executed action, so ``states[t]`` is the state ``actions[t]``
was applied to (the robomimic convention). Images are not recorded here:
``memobench data render`` replays the stored states through a camera.
"""

from __future__ import annotations

import numpy as np

from memobench.evaluation.protocol import Protocol
from memobench.sim.cue import CueRecording
from memobench.sim.env import SimEnv
from memobench.sim.render import resize_with_pad

PROPRIO_KEYS = ("ee_pos", "ee_ori", "gripper_states", "joint_states")


class DemoRecorder:
    """Per-step arrays of one episode; see :meth:`arrays` for what comes out."""

    def __init__(self, live_cameras: tuple[str, ...] = (), live_size: int = 128) -> None:
        # Cameras rendered live at every step (for checking replay rendering; collection
        # itself is camera-free and leaves this empty).
        self.live_cameras, self.live_size = live_cameras, live_size
        self.live_frames: dict[str, list[np.ndarray]] = {c: [] for c in live_cameras}
        self.actions: list[np.ndarray] = []
        self.states: list[np.ndarray] = []
        self.robot_states: list[np.ndarray] = []
        self.proprio: dict[str, list[np.ndarray]] = {k: [] for k in PROPRIO_KEYS}
        self.cue = CueRecording()

    def begin(self, cue: CueRecording) -> None:
        self.cue = cue

    def add(self, env: SimEnv, action: np.ndarray) -> None:
        self.actions.append(np.asarray(action, dtype=np.float64))
        self.states.append(env.physics_state())
        self.robot_states.append(env.robot_state())
        for key, value in env.proprio().items():
            self.proprio[key].append(value)
        for camera in self.live_cameras:  # as the policy is shown them (render_states draws the same way)
            frame = env.render(camera, Protocol().camera_size)
            self.live_frames[camera].append(resize_with_pad(frame, self.live_size))

    def arrays(self, labels: list[np.ndarray] | None = None) -> dict[str, np.ndarray]:
        """``actions`` [T,7] float64, ``states`` [T,S] float64 (MuJoCo integration state),
        with perturbed execution (``labels``: the expert's own action at each executed step) ``actions``
        the labels and ``executed_actions`` [T,7] what ran,
        ``robot_states`` [T,8] float32 (eef pos, axis-angle, gripper), ``obs/<proprio key>``
        [T,k] float64, ``cue/states`` [C,S] and ``cue/robot_states`` [C,8] (C = 0 without a cue)."""
        executed = np.stack(self.actions)
        if labels is not None and len(labels) != len(executed):
            raise RuntimeError(f"{len(labels)} expert labels for {len(executed)} executed steps")
        out = {
            "actions": executed if labels is None else np.stack(labels),
            **({} if labels is None else {"executed_actions": executed}),
            "states": np.stack(self.states),
            "robot_states": np.stack(self.robot_states),
            **{f"obs/{k}": np.stack(v) for k, v in self.proprio.items()},
        }
        width = out["states"].shape[1]
        out["cue/states"] = np.stack(self.cue.physics) if self.cue.physics else np.zeros((0, width))
        out["cue/robot_states"] = np.stack(self.cue.states) if self.cue.states else np.zeros((0, 8), dtype=np.float32)
        return out
