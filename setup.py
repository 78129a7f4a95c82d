"""Build hook: where the ``bisca`` packages live, and the Python code generated from ``proto/``.

**Folder = import name.**  ``bisca`` is one namespace over the design's top-level folders.  Each
entry of :data:`ROOTS` says where one part of it starts; below that, the import path *is* the
folder path (``bisca.server.referee`` is ``server/referee/``, ``bisca.client.bots`` is
``clients/python/bisca/client/bots/``), and every folder with an ``__init__.py`` is found on its
own: nothing lists packages by hand.  ``tests/tooling/test_layout.py`` holds the rule.

**Generated code.**  The ``.proto`` files are the single source of truth; the generated
``*_pb2*.py`` files are never committed.  They are written beside the ``.proto`` files, whose
folder is the ``bisca.v1`` package, so that the imports protoc writes
(``from bisca.v1 import belote_pb2``) resolve.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent

#: Import prefix -> folder (relative to this file).  ``proto/bisca`` holds ``bisca.v1`` (the
#: protoc output) and ``bisca.wire`` (the codec both the server and the Python SDK use); the
#: SDK keeps its own ``bisca/client`` tree so that ``clients/python`` installs on its own too.
ROOTS = {
    "bisca": "proto/bisca",
    "bisca.engine": "engine",
    "bisca.server": "server",
    "bisca.client": "clients/python/bisca/client",
}


def discover_packages(roots: dict[str, str] = ROOTS, base: Path = HERE) -> list[str]:
    """Every package under ``roots`` (folders relative to ``base``): a folder with an
    ``__init__.py``, named by its path.  ``clients/python/setup.py`` (the ``bisca-client``
    distribution) calls it with its share of :data:`ROOTS`."""
    packages = []
    for prefix, folder in roots.items():
        root = (base / folder).resolve()
        for init in sorted(root.rglob("__init__.py")):
            parts = init.parent.relative_to(root).parts
            if "node_modules" in parts or any(part.startswith(".") for part in parts):
                continue
            packages.append(".".join((prefix, *parts)))
    return packages


def generate_protos() -> None:
    """Run protoc on ``proto/`` (grpcio-tools is a build requirement of both distributions)."""
    from grpc_tools import protoc  # only at build time: the layout test imports this file

    protos = sorted(str(path.relative_to(HERE / "proto")) for path in (HERE / "proto").rglob("*.proto"))
    include = Path(protoc.__file__).resolve().parent / "_proto"
    arguments = [
        "grpc_tools.protoc",
        f"-I{HERE / 'proto'}",
        f"-I{include}",
        f"--python_out={HERE / 'proto'}",
        f"--pyi_out={HERE / 'proto'}",
        f"--grpc_python_out={HERE / 'proto'}",
        *protos,
    ]
    if protoc.main(arguments) != 0:
        raise SystemExit("protoc failed on " + " ".join(protos))


class BuildPyWithProtos(build_py):
    def run(self) -> None:
        generate_protos()
        super().run()


if __name__ == "__main__":  # as setuptools runs it (the layout test imports it)
    setup(
        cmdclass={"build_py": BuildPyWithProtos},
        package_dir=ROOTS,
        packages=discover_packages(),
    )
