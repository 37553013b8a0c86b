"""A training folder is untrusted input: its JSON files are read only as small regular files."""

from __future__ import annotations

import pytest

from memobench.training.checkpoint_files import checkpoint_step, read_config


@pytest.mark.timeout(20)
def test_a_config_linked_to_an_endless_device_is_refused_at_once(tmp_path):
    (tmp_path / "config.json").symlink_to("/dev/urandom")
    with pytest.raises(ValueError, match="config.json is not a regular file"):
        read_config(tmp_path)


def test_an_oversized_state_is_refused_without_reading_it(tmp_path):
    checkpoint = tmp_path / "checkpoint-00000010"
    checkpoint.mkdir()
    with (checkpoint / "state.json").open("wb") as f:
        f.truncate(17 * 1024 * 1024)  # sparse: 17 MB that cost nothing to make
    with pytest.raises(ValueError, match="more than the 16777216"):
        checkpoint_step(checkpoint)


def test_a_missing_config_is_none(tmp_path):
    assert read_config(tmp_path) is None
