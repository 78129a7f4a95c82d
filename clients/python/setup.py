"""Build hook of ``bisca-client``, the Python bot SDK as a distribution of its own.

The SDK's code lives where the project keeps it: ``bisca/client`` here, and the engine, the
codec and the ``.proto`` files two folders up.  So this file does not copy anything: it loads
the project's own ``setup.py`` (its folder rule and its protoc step, written once) and builds a
wheel of the parts a bot imports, i.e. every root of the ``bisca`` namespace but
``bisca.server``.  ``bisca`` stays a namespace package (no ``bisca/__init__.py`` anywhere), so
the import names are the same in this distribution and in the project's.

A wheel needs the project beside this folder: build it from a clone (``pip install
./clients/python``, which builds in place), not from an sdist.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent.parent

_spec = importlib.util.spec_from_file_location("bisca_project_setup", PROJECT / "setup.py")
if _spec is None or _spec.loader is None or not (PROJECT / "proto").is_dir():
    raise SystemExit(f"bisca-client builds from a clone of Bisca: no project at {PROJECT}")
project = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(project)

#: The parts of the namespace a bot needs, as folders relative to this file.
ROOTS = {
    prefix: os.path.relpath(PROJECT / folder, HERE)
    for prefix, folder in project.ROOTS.items()
    if prefix != "bisca.server"
}


class BuildPyWithProtos(build_py):
    def run(self) -> None:
        project.generate_protos()
        super().run()


setup(
    cmdclass={"build_py": BuildPyWithProtos},
    package_dir=ROOTS,
    packages=project.discover_packages(ROOTS, HERE),
)
