"""Run a script or a module the way ``python script.py`` / ``python -m module`` does: the same
``sys.argv``, ``sys.path[0]``, ``__main__``, exit code and uncaught-exception report (our frames are
left out of the traceback)."""
from __future__ import annotations

import os
import runpy
import signal
import sys
from types import TracebackType

_OURS = ("runpy", __name__)   # modules whose frames an uncaught exception's report leaves out


def exit_code(exc: SystemExit) -> int:
    """What ``sys.exit(code)`` makes the process exit with (a message is printed, as Python does)."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _user_frames(tb: TracebackType | None) -> TracebackType | None:
    while tb is not None and tb.tb_frame.f_globals.get("__name__") in _OURS:
        tb = tb.tb_next
    return tb


def _report(exc: BaseException) -> None:
    """Python's report of an uncaught exception (``sys.excepthook``), without our frames."""
    tb = _user_frames(exc.__traceback__)
    sys.excepthook(type(exc), exc.with_traceback(tb), tb)


def run(script: str | None, module: str | None, args: list[str]) -> int:
    """Run ``script`` (a path) or ``module`` (a name) with ``args``; returns the exit code. The caller's
    ``sys.argv`` and ``sys.path`` are restored afterwards (the CLI can run in-process)."""
    saved_argv, saved_path = sys.argv, list(sys.path)
    entry = (os.path.dirname(os.path.realpath(script)) if script is not None else os.getcwd())
    if sys.path:
        sys.path[0] = entry   # the launcher's own directory is not the script's
    else:
        sys.path.insert(0, entry)
    sys.argv = [script if script is not None else "-m", *args]
    try:
        if script is not None:
            runpy.run_path(script, run_name="__main__")
        else:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        return exit_code(exc)
    except KeyboardInterrupt as exc:
        _report(exc)
        sys.stdout.flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)   # Python dies of the SIGINT, as here
        os.kill(os.getpid(), signal.SIGINT)
        return 130
    except ImportError as exc:
        if module is not None and getattr(exc, "name", None) == module and _user_frames(exc.__traceback__) is None:
            print(f"{sys.executable}: No module named {module}", file=sys.stderr)   # as python -m says it
            return 1
        _report(exc)
        return 1
    except BaseException as exc:  # noqa: BLE001 - reported exactly as Python reports an uncaught one
        _report(exc)
        return 1
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    return 0

