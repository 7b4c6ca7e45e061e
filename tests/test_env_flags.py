"""The PYPTO_PRO_SIM_* switches: one spelling of on/off and counts, bad values named."""
import pytest

from pypto_pro import env_flags


@pytest.mark.parametrize("raw, want", [("1", True), ("ON", True), (" yes ", True), ("true", True),
                                       ("0", False), ("off", False), ("No", False), ("FALSE", False)])
def test_flag_spellings(monkeypatch, raw, want):
    monkeypatch.setenv("PYPTO_PRO_SIM_X", raw)
    assert env_flags.flag("PYPTO_PRO_SIM_X", not want) is want


@pytest.mark.parametrize("default", [True, False])
def test_flag_unset_or_blank_is_default(monkeypatch, default):
    monkeypatch.delenv("PYPTO_PRO_SIM_X", raising=False)
    assert env_flags.flag("PYPTO_PRO_SIM_X", default) is default
    monkeypatch.setenv("PYPTO_PRO_SIM_X", "  ")
    assert env_flags.flag("PYPTO_PRO_SIM_X", default) is default


def test_flag_bad_value_is_named(monkeypatch):
    monkeypatch.setenv("PYPTO_PRO_SIM_MEMO", "o")
    with pytest.raises(ValueError, match=r"PYPTO_PRO_SIM_MEMO='o': expected one of 1, on"):
        env_flags.flag("PYPTO_PRO_SIM_MEMO", True)


@pytest.mark.parametrize("raw, want", [("", 3), ("8", 8), (" 1 ", 1)])
def test_count(monkeypatch, raw, want):
    monkeypatch.setenv("PYPTO_PRO_SIM_LANES", raw)
    assert env_flags.count("PYPTO_PRO_SIM_LANES", 3) == want


@pytest.mark.parametrize("raw", ["0", "-2", "eight", "1.5"])
def test_count_bad_value_is_named(monkeypatch, raw):
    monkeypatch.setenv("PYPTO_PRO_SIM_LANES", raw)
    with pytest.raises(ValueError, match="PYPTO_PRO_SIM_LANES=.*positive integer"):
        env_flags.count("PYPTO_PRO_SIM_LANES", 1)


def test_launch_memo_reads_the_flag(monkeypatch):
    from pypto_pro.runtime import launch_memo
    monkeypatch.setenv("PYPTO_PRO_SIM_MEMO", "off")
    assert not launch_memo.enabled()
    monkeypatch.setenv("PYPTO_PRO_SIM_MEMO", "On")
    assert launch_memo.enabled()
