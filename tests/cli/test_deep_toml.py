"""A TOML file nested thousands of levels deep is refused as bad input naming the file, never
a ``RecursionError`` traceback (tomllib parses nested arrays by recursion)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.commands import bisca

DEPTH = 5000


def _deep_file(path: Path, prefix: str) -> Path:
    path.write_text(prefix + "[" * DEPTH + "]" * DEPTH + "\n")
    return path


@pytest.mark.system
def test_a_deeply_nested_tournament_file_is_refused_naming_it(tmp_path: Path) -> None:
    deep = _deep_file(tmp_path / "deep.toml", "game = ")
    result = bisca("tournament", "run", str(deep), "--data", str(tmp_path / "data"))
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    assert f"{deep}: not valid TOML: nested too deeply" in result.stderr, result.stderr


@pytest.mark.system
def test_a_deeply_nested_settings_file_is_refused_naming_it(tmp_path: Path) -> None:
    deep = _deep_file(tmp_path / "deep.toml", "[server]\nlisten = ")
    result = bisca("serve", "--config", str(deep), "--data", str(tmp_path / "data"))
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    assert f"{deep}: not valid TOML: nested too deeply" in result.stderr, result.stderr
