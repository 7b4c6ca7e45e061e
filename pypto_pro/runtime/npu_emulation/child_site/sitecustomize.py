"""Put on PYTHONPATH by ``pypto-pro run``: a Python process started by the script (a pytest-xdist worker,
a multiprocessing child, ``subprocess.run([sys.executable, ...])``) gets the same NPU emulation, read
from ``$PYPTO_PRO_NPU_EMULATION``. Any other sitecustomize further along sys.path still runs first."""
import os
import sys


def _run_the_next_sitecustomize() -> None:
    import importlib.machinery
    import importlib.util
    here = os.path.dirname(os.path.abspath(__file__))
    others = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if spec is not None and spec.loader is not None and spec.origin != os.path.abspath(__file__):
        spec.loader.exec_module(importlib.util.module_from_spec(spec))


_run_the_next_sitecustomize()
if os.environ.get("PYPTO_PRO_NPU_EMULATION"):
    try:
        from pypto_pro.runtime.npu_emulation import install_from_environment
    except ImportError:  # an interpreter without pypto_pro: it runs as it would anyway
        pass
    else:
        install_from_environment()
