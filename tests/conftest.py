"""Shared fixtures: every test writes its build dumps under a temporary directory."""
import pytest


@pytest.fixture(autouse=True)
def _build_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PRO_BUILD_DIR", str(tmp_path / "build"))
    yield
