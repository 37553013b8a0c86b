"""Loading adapters from ``--adapter-spec`` / ``--policy``: every failure names what went wrong."""

from __future__ import annotations

import sys
import textwrap
import uuid
from pathlib import Path

import numpy as np
import pytest

from memobench.policies.adapter import validate_chunk
from memobench.policies.builtin import NoopPolicy, RandomPolicy
from memobench.policies.loader import (
    BUILTIN_POLICIES,
    AdapterSpecError,
    build_adapter,
    builtin_spec,
    resolve_factory,
)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "robomemarena_adapter.py"

ADAPTER_SOURCE = """
import numpy as np

class Policy:
    def __init__(self, **kwargs):
        self.kwargs = kwargs

    def reset(self):
        pass

    def infer_actions(self, obs, prompt, resize_size):
        return np.zeros((50, 7))

def build_adapter(**kwargs):
    return Policy(**kwargs)

def make_nothing():
    return object()

def make_half():
    class Half:
        def reset(self):
            pass
    return Half()

def make_with_data_attribute():
    class NotCallable:
        reset = None
        def infer_actions(self, obs, prompt, resize_size):
            return np.zeros((1, 7))
    return NotCallable()

def explode(**kwargs):
    raise RuntimeError("checkpoint /models/pi0 not found")

NOT_A_FACTORY = 42
"""


@pytest.fixture(autouse=True)
def _restore_sys_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # Loading a file adds its folder to sys.path; keep that from leaking between tests.
    monkeypatch.setattr(sys, "path", list(sys.path))


def write(path: Path, source: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))
    return path


@pytest.fixture
def adapter_file(tmp_path: Path) -> Path:
    return write(tmp_path / "my_adapter.py", ADAPTER_SOURCE)


@pytest.fixture
def module_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """An importable package module holding ADAPTER_SOURCE (unique name per test)."""
    package = f"mb_loader_pkg_{uuid.uuid4().hex[:8]}"
    write(tmp_path / "site" / package / "__init__.py", "")
    write(tmp_path / "site" / package / "policy.py", ADAPTER_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    return f"{package}.policy"


# -- the two spec forms --------------------------------------------------------------------


def test_file_spec_builds_the_adapter(adapter_file: Path) -> None:
    adapter = build_adapter(f"{adapter_file}:build_adapter")
    assert type(adapter).__name__ == "Policy"
    assert adapter.kwargs == {}
    assert validate_chunk(adapter.infer_actions({}, "p", 224)).shape == (50, 7)


def test_relative_file_spec(adapter_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(adapter_file.parent)
    adapter = build_adapter("my_adapter.py:build_adapter")
    assert type(adapter).__name__ == "Policy"


def test_module_spec_builds_the_adapter(module_name: str) -> None:
    adapter = build_adapter(f"{module_name}:build_adapter", {"k": 1})
    assert type(adapter).__name__ == "Policy"
    assert type(adapter).__module__ == module_name
    assert adapter.kwargs == {"k": 1}


def test_module_spec_of_the_builtins() -> None:
    assert isinstance(build_adapter("memobench.policies.builtin:NoopPolicy"), NoopPolicy)


def test_kwargs_are_passed_to_the_factory(adapter_file: Path) -> None:
    kwargs = {
        "checkpoint": "/models/x",
        "temperature": 0.5,
        "cameras": ["a", "b"],
        "nested": {"k": None},
    }
    adapter = build_adapter(f"{adapter_file}:build_adapter", kwargs)
    assert adapter.kwargs == kwargs


def test_unexpected_kwarg_is_reported_as_factory_error() -> None:
    with pytest.raises(
        AdapterSpecError,
        match=r"factory memobench.policies.builtin:NoopPolicy raised TypeError: .*'speed'",
    ):
        build_adapter("memobench.policies.builtin:NoopPolicy", {"speed": 2})


def test_adapter_can_import_its_sibling_files(tmp_path: Path) -> None:
    helper = f"mb_helper_{uuid.uuid4().hex[:8]}"
    write(tmp_path / "pkg" / f"{helper}.py", "CHUNK = 17\n")
    path = write(
        tmp_path / "pkg" / "adapter.py",
        f"""
        import numpy as np
        from {helper} import CHUNK

        class P:
            def reset(self):
                pass
            def infer_actions(self, obs, prompt, resize_size):
                return np.zeros((CHUNK, 7))

        def make():
            return P()
        """,
    )
    assert build_adapter(f"{path}:make").infer_actions({}, "", 224).shape == (17, 7)


def test_two_files_with_the_same_name_do_not_collide(tmp_path: Path) -> None:
    source = """
    class P:
        NAME = {name!r}
        def reset(self):
            pass
        def infer_actions(self, obs, prompt, resize_size):
            return [[0.0] * 7]

    def make():
        return P()
    """
    first = write(tmp_path / "a" / "adapter.py", source.format(name="first"))
    second = write(tmp_path / "b" / "adapter.py", source.format(name="second"))
    assert build_adapter(f"{first}:make").NAME == "first"
    assert build_adapter(f"{second}:make").NAME == "second"
    assert build_adapter(f"{first}:make").NAME == "first"


# -- failures: each names the spec part that is wrong -----------------------------------------


def test_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "adapter.py"
    with pytest.raises(AdapterSpecError) as info:
        build_adapter(f"{missing}:build_adapter")
    assert str(info.value) == f"adapter file not found: {missing}"


def test_missing_factory_suggests_the_closest_name(adapter_file: Path) -> None:
    with pytest.raises(AdapterSpecError) as info:
        build_adapter(f"{adapter_file}:build_adaptor")
    assert str(info.value) == f"{adapter_file} has no factory named 'build_adaptor'; did you mean build_adapter?"


def test_missing_factory_without_a_close_name(adapter_file: Path) -> None:
    with pytest.raises(AdapterSpecError) as info:
        resolve_factory(f"{adapter_file}:zzzz")
    assert str(info.value) == f"{adapter_file} has no factory named 'zzzz'"


def test_missing_factory_in_a_module(module_name: str) -> None:
    with pytest.raises(
        AdapterSpecError,
        match=rf"{module_name} has no factory named 'explod'; did you mean explode\?",
    ):
        build_adapter(f"{module_name}:explod")


def test_missing_module() -> None:
    with pytest.raises(AdapterSpecError, match=r"cannot import module 'no_such_pkg_mb\.policy'"):
        build_adapter("no_such_pkg_mb.policy:build_adapter")


def test_non_callable_factory(adapter_file: Path) -> None:
    with pytest.raises(AdapterSpecError) as info:
        build_adapter(f"{adapter_file}:NOT_A_FACTORY")
    assert str(info.value) == f"{adapter_file}:NOT_A_FACTORY is a int, not a callable factory"


def test_factory_raising(adapter_file: Path) -> None:
    spec = f"{adapter_file}:explode"
    with pytest.raises(AdapterSpecError) as info:
        build_adapter(spec, {"x": 1})
    assert str(info.value) == f"factory {spec} raised RuntimeError: checkpoint /models/pi0 not found"
    assert isinstance(info.value.__cause__, RuntimeError)


def test_import_error_inside_the_file(tmp_path: Path) -> None:
    path = write(tmp_path / "broken.py", "import not_a_real_dependency_mb\n")
    with pytest.raises(
        AdapterSpecError,
        match=r"importing .*broken\.py failed: ModuleNotFoundError: .*not_a_real_dependency_mb",
    ):
        build_adapter(f"{path}:build_adapter")


def test_syntax_error_inside_the_file(tmp_path: Path) -> None:
    path = write(tmp_path / "typo.py", "def build_adapter(:\n")
    with pytest.raises(AdapterSpecError, match=r"importing .*typo\.py failed: SyntaxError"):
        build_adapter(f"{path}:build_adapter")


def test_module_raising_at_import_is_an_adapter_spec_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name = f"mb_raises_{uuid.uuid4().hex[:8]}"
    write(tmp_path / f"{name}.py", "raise RuntimeError('no GPU found')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(AdapterSpecError) as info:
        build_adapter(f"{name}:build_adapter")
    assert str(info.value) == f"importing module {name!r} failed: RuntimeError: no GPU found"


def test_file_parsing_argv_at_import_is_an_adapter_spec_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Research scripts often parse the command line at import time.
    path = write(
        tmp_path / "script.py",
        """
        import argparse
        args = argparse.ArgumentParser().parse_args()

        def build_adapter(**kwargs):
            return None
        """,
    )
    monkeypatch.setattr(sys, "argv", ["memobench", "eval", "--adapter-spec", f"{path}:build_adapter"])
    with pytest.raises(AdapterSpecError, match=r"importing .*script\.py failed: SystemExit"):
        build_adapter(f"{path}:build_adapter")


def test_factory_calling_sys_exit_is_an_adapter_spec_error(tmp_path: Path) -> None:
    path = write(tmp_path / "quits.py", "def make():\n    raise SystemExit('no checkpoint')\n")
    with pytest.raises(AdapterSpecError) as info:
        build_adapter(f"{path}:make")
    assert str(info.value) == f"factory {path}:make raised SystemExit: no checkpoint"


@pytest.mark.parametrize("factory", ["make_nothing", "make_half"])
def test_object_without_the_contract_methods(adapter_file: Path, factory: str) -> None:
    with pytest.raises(AdapterSpecError) as info:
        build_adapter(f"{adapter_file}:{factory}")
    message = str(info.value)
    assert message.startswith(f"factory {adapter_file}:{factory} returned a ")
    assert "infer_actions()" in message
    if factory == "make_nothing":
        assert "returned a object without reset and infer_actions()" in message
    else:
        assert "returned a Half without infer_actions()" in message


def test_non_callable_contract_attribute_counts_as_missing(adapter_file: Path) -> None:
    with pytest.raises(AdapterSpecError, match=r"returned a NotCallable without reset\(\)"):
        build_adapter(f"{adapter_file}:make_with_data_attribute")


@pytest.mark.parametrize("spec", ["my_adapter.py", "build_adapter", "my_adapter.py:", ":build_adapter", ""])
def test_malformed_spec(spec: str) -> None:
    with pytest.raises(AdapterSpecError) as info:
        build_adapter(spec)
    assert str(info.value) == (
        f"adapter spec {spec!r} must look like path/to/file.py:factory or package.module:factory"
    )


# -- built-in policies ---------------------------------------------------------------------


def test_builtin_names_resolve_to_camera_free_policies() -> None:
    noop = build_adapter(builtin_spec("noop"))
    rand = build_adapter(builtin_spec("random"), {"chunk": 3, "scale": 0.5})
    assert isinstance(noop, NoopPolicy) and isinstance(rand, RandomPolicy)
    assert noop.needs_images is False and rand.needs_images is False
    expected = np.zeros((50, 7))
    expected[:, 6] = -1.0
    np.testing.assert_array_equal(noop.infer_actions({}, "", 224), expected)
    rand.begin_episode(np.random.default_rng(3))
    actions = rand.infer_actions({}, "", 224)
    np.testing.assert_array_equal(actions, 0.5 * np.random.default_rng(3).uniform(-1, 1, (3, 7)))


@pytest.mark.parametrize("name, suggestion", [("rando", "'random'"), ("nop", "'noop'"), ("Random", "'random'")])
def test_unknown_builtin_suggests_the_closest(name: str, suggestion: str) -> None:
    with pytest.raises(AdapterSpecError) as info:
        builtin_spec(name)
    message = str(info.value)
    # The closest name comes first (the other built-in may follow, both are short words).
    assert message.startswith(f"unknown policy {name!r}; did you mean {suggestion}")
    assert message.endswith(
        "? (built-in: noop, random, expert, expert-memoryless, expert-reactive, expert-slow, adversary-slow, "
        "adversary-arm, adversary-state, adversary-scene, arena-exploit, arena-exploit-register, remote, checkpoint)"
    )


def test_unknown_builtin_without_a_close_name_lists_the_builtins() -> None:
    with pytest.raises(AdapterSpecError) as info:
        builtin_spec("openvla")
    assert (
        str(info.value)
        == "unknown policy 'openvla' (built-in: noop, random, expert, expert-memoryless, expert-reactive, "
        "expert-slow, adversary-slow, adversary-arm, adversary-state, adversary-scene, arena-exploit, "
        "arena-exploit-register, remote, checkpoint)"
    )
    assert list(BUILTIN_POLICIES) == [
        "noop",
        "random",
        "expert",
        "expert-memoryless",
        "expert-reactive",
        "expert-slow",
        "adversary-slow",
        "adversary-arm",
        "adversary-state",
        "adversary-scene",
        "arena-exploit",
        "arena-exploit-register",
        "remote",
        "checkpoint",
    ]


# -- the README's example adapter ------------------------------------------------------------


def example_obs(position: tuple[float, float, float], image: np.ndarray | None = None) -> dict:
    state = np.zeros(8, dtype=np.float32)
    state[:3] = position
    obs = {"observation/state": state, "prompt": "p"}
    if image is not None:
        obs["observation/image"] = image
        obs["observation/wrist_image"] = np.zeros_like(image)
    return obs


def test_example_adapter_loads_and_honours_the_contract() -> None:
    adapter = build_adapter(f"{EXAMPLE}:build_adapter", {"offset": [0.0, 0.0, 0.1]})
    adapter.reset()
    image = np.full((224, 224, 3), 30, dtype=np.uint8)
    image[:112] = 90
    first = validate_chunk(adapter.infer_actions(example_obs((0.1, 0.0, 1.0), image), "p", 224))
    assert first.shape == (50, 7)
    assert np.all(first[:, 6] == -1.0)  # gripper open
    assert np.all(first[:, 3:6] == 0.0)  # no rotation
    np.testing.assert_allclose(first[:, :3], [[0.0, 0.0, 0.2]] * 50)  # clipped step up
    assert adapter.last_image_mean == pytest.approx(60.0)

    # Half-way there: a smaller step, still towards the target fixed at the first query.
    second = adapter.infer_actions(example_obs((0.1, 0.0, 1.06)), "p", 224)
    np.testing.assert_allclose(second[0, :3], [0.0, 0.0, 5.0 * 0.04], atol=1e-6)
    # Past the target: step back down.
    third = adapter.infer_actions(example_obs((0.1, 0.0, 1.12)), "p", 224)
    assert third[0, 2] == pytest.approx(-0.1, abs=1e-6)


def test_example_adapter_works_without_images_and_reset_forgets() -> None:
    adapter = build_adapter(f"{EXAMPLE}:build_adapter")
    assert not hasattr(adapter, "needs_images")  # a RoboMemArena adapter: images by default
    adapter.reset()
    adapter.infer_actions(example_obs((0.0, 0.0, 1.0)), "p", 224)
    assert adapter.last_image_mean is None and adapter.queries == 1
    np.testing.assert_allclose(adapter.target, [0.0, 0.0, 1.05], atol=1e-6)  # default offset
    adapter.reset()
    assert adapter.target is None and adapter.queries == 0
    chunk = adapter.infer_actions(example_obs((0.5, 0.2, 0.9)), "p", 224)
    np.testing.assert_allclose(adapter.target, [0.5, 0.2, 0.95], atol=1e-6)
    np.testing.assert_allclose(chunk[0, :3], [0.0, 0.0, 0.2])
    adapter.close()
