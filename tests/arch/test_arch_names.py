"""Which model each ``arch`` name selects (the real names, ours, the 950 variants, the auto rule), and
``get_platform_info()`` answering for it."""
from __future__ import annotations

import pytest

import pypto_pro.language as pl
from pypto_pro import CompileError
from pypto_pro.arch import A2A3, A5_VARIANTS, UnknownArchError, accepted_names, resolve_arch
from pypto_pro.runtime.platform import PlatformInfo, get_platform_info


@pytest.mark.parametrize("name", ["a2", "a3", "a2a3", "A3", " a2 "])
def test_a2_and_a3_select_the_a2a3_model(name):
    assert resolve_arch(name) is A2A3


@pytest.mark.parametrize("name", ["a5", "A5", " a5", "auto", "AUTO", None, ""])
def test_a5_auto_and_none_select_the_default_950(name):
    assert resolve_arch(name) is A5_VARIANTS["950PR_9589"]


@pytest.mark.parametrize("name", ["950DT_9581", "950dt_9581", "Ascend950DT_9581", "ASCEND950DT_9581"])
def test_a_950_variant_by_its_soc_version(name):
    assert resolve_arch(name) is A5_VARIANTS["950DT_9581"]


def test_auto_reads_the_real_environment_variable(monkeypatch):
    monkeypatch.setenv("PYPTOPRO_JIT_ARCH", "a3")
    assert resolve_arch(None) is A2A3 and resolve_arch("auto") is A2A3
    assert resolve_arch("a5").name == "a5"  # an explicit name wins over the variable, as in the real one
    monkeypatch.setenv("PYPTOPRO_JIT_ARCH", " ")
    assert resolve_arch(None).name == "a5"


def test_pypto_pro_soc_chooses_what_a5_means(monkeypatch):
    monkeypatch.setenv("PYPTO_PRO_SOC", "Ascend950PR_9579")
    assert resolve_arch("a5") is A5_VARIANTS["950PR_9579"] and resolve_arch(None) is A5_VARIANTS["950PR_9579"]
    assert resolve_arch("950DT_9572") is A5_VARIANTS["950DT_9572"]
    assert resolve_arch("a3") is A2A3
    monkeypatch.setenv("PYPTO_PRO_SOC", "910B1")
    with pytest.raises(UnknownArchError, match=r"\$PYPTO_PRO_SOC='910B1' is not an Ascend 950 variant.*950DT_9581"):
        resolve_arch("a5")


@pytest.mark.parametrize("bad", ["a9", "910b", "a5x", " "])
def test_an_unknown_name_lists_the_accepted_ones(bad):
    with pytest.raises(UnknownArchError) as info:
        resolve_arch(bad)
    err = info.value
    assert isinstance(err, ValueError) and isinstance(err, CompileError)  # the real one raises ValueError
    for name in accepted_names():
        assert name in str(err)
    assert {"a2", "a3", "a5", "a2a3"} <= set(accepted_names())


def test_a_bad_environment_value_is_named(monkeypatch):
    monkeypatch.setenv("PYPTOPRO_JIT_ARCH", "a4")
    with pytest.raises(ValueError, match=r"unknown arch 'a4' \(from \$PYPTOPRO_JIT_ARCH\)"):
        resolve_arch(None)


def test_jit_rejects_an_unknown_arch_at_decoration_as_a_value_error():
    def k(x: pl.Tensor[[64, 64], pl.DT_FP32]):
        pass
    with pytest.raises(ValueError, match=r"unknown arch 'a6' for kernel 'k'; choose one of a2, a3, a5, a2a3"):
        pl.jit(arch="a6")(k)
    with pytest.raises(UnknownArchError, match="must be a string or None"):
        pl.jit(arch=5)(k)


def test_jit_default_arch_is_the_auto_rule(monkeypatch):
    def k(x: pl.Tensor[[64, 64], pl.DT_FP32]):
        pass
    assert pl.jit(k).arch is A5_VARIANTS["950PR_9589"]
    monkeypatch.setenv("PYPTOPRO_JIT_ARCH", "a2")
    assert pl.jit(k).arch is A2A3 and pl.jit()(k).arch is A2A3
    assert pl.jit(arch="a5")(k).arch.name == "a5"


# ---- get_platform_info ------------------------------------------------------------------------------------


def test_platform_info_default_is_the_950():
    info = get_platform_info()
    assert info == PlatformInfo(soc_version="DAV_3510", core_num=32, cube_core_num=32, vector_core_num=64)
    assert info.arch == "a5"


def test_platform_info_follows_the_selected_arch(monkeypatch):
    monkeypatch.setenv("PYPTOPRO_JIT_ARCH", "a2")
    info = get_platform_info()
    assert (info.soc_version, info.core_num, info.cube_core_num, info.vector_core_num) == ("DAV_2201", 24, 24, 48)
    assert info.arch == "a3"  # the real runtime maps DAV_2201 (910B and 910C) to "a3"
    monkeypatch.setenv("PYPTOPRO_JIT_ARCH", "a5")
    monkeypatch.setenv("PYPTO_PRO_SOC", "950DT_9572")
    info = get_platform_info(force_refresh=True)
    assert (info.soc_version, info.core_num, info.vector_core_num, info.arch) == ("DAV_3510", 28, 56, "a5")


def test_platform_info_arch_property_as_the_real_one_defines_it():
    assert PlatformInfo().arch == ""
    assert PlatformInfo(soc_version="DAV_1001").arch == "a3"
    assert PlatformInfo(soc_version="DAV_9999").arch == "a3"
    assert PlatformInfo(soc_version="DAV_3510").arch == "a5"
