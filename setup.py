"""Build hook of ``bisca``, the arena: the ``bisca.server`` packages under ``server/``.

**Folder = import name.**  ``bisca`` is one namespace package (no ``bisca/__init__.py``
anywhere) spread over the project's top-level folders, each of which holds its share under
its own ``bisca/`` folder, so that a path below a root *is* the import path:

* ``server/bisca/server/``  the arena (this distribution, ``bisca``);
* ``engine/bisca/engine/``, ``proto/bisca/{v1,wire}/`` and ``clients/python/bisca/client/``:
  the rules, the contract and the Python SDK (the ``bisca-client`` distribution,
  ``clients/python/setup.py``), which the arena depends on.

The two distributions ship disjoint packages.  ``server/`` is a plain source root, so an
editable install is a static path entry: a new module imports without reinstalling, and mypy
and an editor find every module from the tree through the four roots (``pyproject.toml``).
``tests/tooling/test_layout.py`` holds the rule.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent

#: Where each part of the ``bisca`` namespace lives in a clone (folder relative to this file);
#: each folder holds ``bisca/<part>``.  The first is this distribution's, the rest
#: ``bisca-client``'s.
SOURCE_ROOTS = {
    "bisca.server": "server",
    "bisca.engine": "engine",
    "bisca.v1": "proto",
    "bisca.wire": "proto",
    "bisca.client": "clients/python",
}


def discover_packages(root: Path, prefix: str) -> list[str]:
    """Every package of ``prefix`` under the source root ``root``: a folder with an
    ``__init__.py``, named by its path below ``root``.  Nothing lists packages by hand."""
    top = root.joinpath(*prefix.split("."))
    packages = []
    for init in sorted(top.rglob("__init__.py")):
        parts = init.parent.relative_to(root).parts
        if "node_modules" in parts or any(part.startswith(".") for part in parts):
            continue
        packages.append(".".join(parts))
    return packages


def discover_data_packages(root: Path, prefix: str) -> dict[str, list[str]]:
    """The folders of files the code reads (the starters of ``bisca new-bot``, the browser
    app's pages), each a package of data with no ``__init__.py``, and that its every file is
    shipped.  setuptools ships package data only from packages it is told of (a folder it is
    not told of draws its "Package would be ignored" warning, and may one day be dropped)."""
    top = root.joinpath(*prefix.split("."))
    data: dict[str, list[str]] = {}
    for folder in sorted(path for path in top.rglob("*") if path.is_dir()):
        parts = folder.relative_to(root).parts
        if any(part in ("node_modules", "__pycache__") or part.startswith(".") for part in parts):
            continue
        if not (folder / "__init__.py").exists() and any(p.is_file() for p in folder.iterdir()):
            data[".".join(parts)] = ["*"]
    return data


if __name__ == "__main__":  # as setuptools runs it (the layout test imports it)
    data = discover_data_packages(HERE / "server", "bisca.server")
    setup(
        package_dir={"": "server"},
        packages=discover_packages(HERE / "server", "bisca.server") + sorted(data),
        package_data={"*": ["py.typed"], **data},
    )
