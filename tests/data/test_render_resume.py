"""``memobench data render`` resumes: a file already rendered at the size, cameras and quality asked is kept."""

from __future__ import annotations

import h5py
import pytest
from tests.training.synthetic import write_dataset
from typer.testing import CliRunner

from memobench.cli import app
from memobench.data.render import already_rendered

BOTH = ["agentview", "wrist"]


@pytest.fixture
def rendered(tmp_path):
    """Two task files whose demos carry both cameras' frames at 16 px, drawn at 'fast' quality."""
    data = tmp_path / "data"
    write_dataset(data, tmp_path / "features", image_size=16)
    for path in data.glob("*.hdf5"):
        with h5py.File(path, "a") as f:
            f["data"].attrs.update(render_quality="fast", cameras="agentview,wrist")
    return data


def test_a_file_counts_as_rendered_only_as_it_was_drawn(rendered) -> None:
    path = rendered / "T01-synthetic.hdf5"
    assert already_rendered(path, 16, BOTH, "fast")
    assert already_rendered(path, 16, ["wrist"], "fast")
    assert not already_rendered(path, 32, BOTH, "fast")
    assert not already_rendered(path, 16, BOTH, "reference")
    with h5py.File(path, "a") as f:
        del f["data/demo_1/cue/eye_in_hand_rgb"]
    assert not already_rendered(path, 16, BOTH, "fast")
    path.write_bytes(b"not hdf5")
    assert not already_rendered(path, 16, BOTH, "fast")


def test_a_second_render_keeps_what_the_first_drew(rendered) -> None:
    before = {p: p.stat().st_mtime_ns for p in rendered.glob("*.hdf5")}
    result = CliRunner(env={"COLUMNS": "250"}).invoke(
        app, ["data", "render", str(rendered), "--image-size", "16", "--render-quality", "fast"]
    )
    assert result.exit_code == 0, result.output
    assert "Rendered 0 file(s) at 16x16" in result.output and "2 already rendered so were kept" in result.output
    assert {p: p.stat().st_mtime_ns for p in rendered.glob("*.hdf5")} == before
