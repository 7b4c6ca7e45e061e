"""On-disk build cache for compiled artifacts (emitted C++, shared objects, manifests).

An entry is a directory named by a hash of everything that determines the artifact: the kernel's
source and the sources of the helpers and stages it uses, its signature, the tiling key, the arch,
and the pypto_pro / Python versions. Several processes may build the same entry at once: a file
lock serialises builders, each builds into a private temporary directory, and the finished entry
appears by one atomic rename. Every entry carries ``manifest.json`` with the SHA-256 of each file;
an entry whose files do not match (a crash mid-write, a truncated file) is detected and rebuilt.
"""
from __future__ import annotations

import fcntl
import hashlib
import inspect
import json
import os
import platform
import shutil
import uuid
from pathlib import Path
from typing import Any, Callable

MANIFEST = "manifest.json"


def default_root() -> Path:
    return Path(os.environ.get("PYPTO_PRO_CACHE_DIR") or Path.home() / ".cache" / "pypto_pro")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def source_closure(fn: Callable) -> list[str]:
    """Sources of ``fn`` and of every ``@pl.inline`` helper / pipeline stage it reaches by name."""
    from pypto_pro.frontend.scope import closure_vars
    seen: dict[str, str] = {}
    todo = [fn]
    while todo:
        f = todo.pop()
        key = f"{getattr(f, '__module__', '')}.{getattr(f, '__qualname__', f)}"
        if key in seen:
            continue
        try:
            seen[key] = inspect.getsource(f)
        except (OSError, TypeError):
            seen[key] = repr(f)
        names = {**getattr(f, "__globals__", {}), **closure_vars(f)}
        code = getattr(f, "__code__", None)
        for n in (code.co_names + code.co_freevars) if code else ():
            v = names.get(n)
            if callable(v) and getattr(v, "__pypto_inline__", False):
                todo.append(v)
    return [seen[k] for k in sorted(seen)]


def cache_key(fn: Callable, *, signature: str, tiling_key: dict | None, arch: str, extra: dict | None = None) -> str:
    from pypto_pro import __version__
    payload = {"sources": source_closure(fn), "signature": signature, "tiling_key": sorted((tiling_key or {}).items()),
               "arch": arch, "pypto_pro": __version__, "python": platform.python_version(), "extra": extra or {}}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:32]


class BuildCache:
    def __init__(self, root: str | os.PathLike | None = None):
        self.root = Path(root) if root is not None else default_root()

    def entry(self, key: str) -> Path:
        return self.root / key

    def valid(self, entry: Path) -> bool:
        manifest = entry / MANIFEST
        try:
            files = json.loads(manifest.read_text())["files"]
            return all(_digest(entry / name) == digest for name, digest in files.items())
        except (OSError, ValueError, KeyError, TypeError):
            return False

    def get_or_build(self, key: str, build: Callable[[Path], Any]) -> Path:
        """The entry for ``key``, building it with ``build(tmp_dir)`` if it is missing or corrupt."""
        entry = self.entry(key)
        if self.valid(entry):
            return entry
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / f"{key}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one builder at a time; the others find it built
            try:
                if self.valid(entry):
                    return entry
                if entry.exists():
                    shutil.rmtree(entry, ignore_errors=True)  # corrupt or partial: rebuild
                tmp = self.root / f"{key}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
                tmp.mkdir()
                try:
                    build(tmp)
                    files = {p.name: _digest(p) for p in sorted(tmp.iterdir()) if p.is_file()}
                    (tmp / MANIFEST).write_text(json.dumps({"key": key, "files": files}, indent=2))
                    os.replace(tmp, entry)  # atomic publish
                finally:
                    if tmp.exists():
                        shutil.rmtree(tmp, ignore_errors=True)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
        return entry
