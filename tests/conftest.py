"""Shared fixtures: every test writes its build dumps under a temporary directory, and launch
settings come from the test itself, not from the environment the suite runs in."""
import pytest


@pytest.fixture(autouse=True)
def _build_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PRO_BUILD_DIR", str(tmp_path / "build"))
    yield


@pytest.fixture(autouse=True)
def _no_env_overrides(monkeypatch):
    """A PYPTO_PRO_TRACE or PYPTO_PRO_CHECK set where the tests run would change every launch (and
    PYPTOPRO_JIT_ARCH / PYPTO_PRO_SOC the machine of every kernel a test decorates)."""
    for name in ("PYPTO_PRO_TRACE", "PYPTO_PRO_CHECK", "PYPTOPRO_JIT_ARCH", "PYPTO_PRO_SOC"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _simulate_every_launch(monkeypatch):
    """Tests relaunch a kernel after changing a simulator setting and compare: each launch must
    simulate (the launch memo is on only in tests/runtime/test_launch_memo.py)."""
    monkeypatch.setenv("PYPTO_PRO_SIM_MEMO", "0")
