"""Build hook: generate the Python code of ``proto/`` with grpcio-tools before packaging.

The ``.proto`` files are the single source of truth; the generated ``*_pb2*.py`` files are never
committed.  They are written beside the ``.proto`` files, whose folder is the ``bisca.v1``
package, so that the imports protoc writes (``from bisca.v1 import belote_pb2``) resolve.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def generate_protos() -> None:
    from grpc_tools import protoc

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


setup(cmdclass={"build_py": BuildPyWithProtos})
