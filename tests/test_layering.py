"""The package's layers import one way: each only from the layers below it.

Bottom to top: ``core`` -> ``sim`` -> ``policies`` | ``experts`` -> ``evaluation`` ->
``metrics`` -> ``data`` | ``report`` | ``gym`` -> ``training`` -> ``cli`` (docs/design.md, "Layers"). Packages on
one level (``policies`` and ``experts``, ``data`` and ``report``) do not import each
other either. Two checks:

- at run time, in a fresh interpreter per package: importing every module of the
  package leaves no module of a higher layer (or a peer) in ``sys.modules``;
- in the source, every ``import`` of a ``memobench`` package, including those inside
  functions (imported lazily, so the run-time check cannot see them) and under
  ``TYPE_CHECKING``, points down or into the package itself.

Also: only ``cli`` imports Rich (library code reports through events), and the light
entry points (``import memobench``, ``memobench.core``, ``memobench tasks list``)
import no simulator and no torch. Nothing here builds an environment.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import memobench

LAYERS: tuple[tuple[str, ...], ...] = (
    ("core",),
    ("sim",),
    ("policies", "experts"),
    ("evaluation",),
    ("metrics",),
    ("data", "report", "gym"),
    ("training",),
    ("cli",),
)
LEVEL = {package: level for level, packages in enumerate(LAYERS) for package in packages}
PACKAGE_ROOT = Path(memobench.__file__).parent
HEAVY = ("mujoco", "robosuite", "libero", "torch")


def forbidden_for(package: str) -> set[str]:
    """Packages ``package`` may not import: every higher layer, and its peers on its own level."""
    return {p for p, level in LEVEL.items() if level > LEVEL[package] or (level == LEVEL[package] and p != package)}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules_of(package: str) -> list[str]:
    return sorted(module_name(p) for p in (PACKAGE_ROOT / package).rglob("*.py"))


def run_fresh(code: str) -> dict:
    """Run ``code`` in a new interpreter; it prints one JSON object, returned here."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


LOADED = """
import importlib, json, sys
for name in {names!r}:
    importlib.import_module(name)
print(json.dumps({{"loaded": sorted(sys.modules)}}))
"""


def test_every_module_belongs_to_a_layer() -> None:
    """A new package or a module at the package root must be given a layer here (and in the docs)."""
    stray = sorted(str(p.relative_to(PACKAGE_ROOT)) for p in PACKAGE_ROOT.glob("*.py") if p.name != "__init__.py")
    unplaced = sorted(p.name for p in PACKAGE_ROOT.iterdir() if (p / "__init__.py").exists() and p.name not in LEVEL)
    assert stray == [] and unplaced == []


@pytest.mark.parametrize("package", list(LEVEL))
def test_importing_a_layer_loads_nothing_above_it(package: str) -> None:
    loaded = run_fresh(LOADED.format(names=modules_of(package)))["loaded"]
    above = forbidden_for(package)
    offenders = sorted(m for m in loaded if m.startswith("memobench.") and m.split(".")[1] in above)
    assert offenders == [], f"importing memobench.{package} loaded {offenders}"


def imported_packages(path: Path) -> list[tuple[int, str]]:
    """(line, memobench package) of every import in ``path``'s source, lazy ones included."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            # ``from memobench import core`` names the package in the alias
            targets = (
                [f"memobench.{alias.name}" for alias in node.names] if node.module == "memobench" else [node.module]
            )
        else:
            continue
        found += [
            (node.lineno, t.split(".")[1]) for t in targets if t.startswith("memobench.") and t.split(".")[1] in LEVEL
        ]
    return found


@pytest.mark.parametrize("package", list(LEVEL))
def test_no_import_in_the_source_points_up(package: str) -> None:
    above = forbidden_for(package)
    offenders = [
        f"{path.relative_to(PACKAGE_ROOT)}:{line} imports memobench.{target}"
        for path in sorted((PACKAGE_ROOT / package).rglob("*.py"))
        for line, target in imported_packages(path)
        if target in above
    ]
    assert offenders == []


LIGHT = """
import json, sys
import memobench
after_root = sorted(sys.modules)
import importlib
for name in {core!r}:
    importlib.import_module(name)
after_core = sorted(sys.modules)
from typer.testing import CliRunner
from memobench.cli import app
result = CliRunner().invoke(app, ["tasks", "list"])
assert result.exit_code == 0, result.output
print(json.dumps({{"root": after_root, "core": after_core, "cli": sorted(sys.modules)}}))
"""


def test_light_entry_points_import_no_simulator_and_no_torch() -> None:
    loaded = run_fresh(LIGHT.format(core=modules_of("core")))
    for stage in ("root", "core", "cli"):
        heavy = sorted(m for m in loaded[stage] if m.split(".")[0] in HEAVY)
        assert heavy == [], f"{stage}: {heavy}"


def test_only_the_cli_draws() -> None:
    """Library code reports through events and return values; Rich is the CLI's alone."""
    offenders = []
    for path in sorted(PACKAGE_ROOT.rglob("*.py")):
        if path.relative_to(PACKAGE_ROOT).parts[0] == "cli":
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            offenders += [
                f"{path.relative_to(PACKAGE_ROOT)}:{node.lineno} imports {n}"
                for n in names
                if n.split(".")[0] == "rich"
            ]
    assert offenders == []
