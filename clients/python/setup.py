"""Build hook of ``bisca-client``: the Python bot SDK, with what a bot imports beside it.

The distribution ships ``bisca.client`` (the SDK and sample bots), ``bisca.engine`` (the
values a bot sees), ``bisca.wire`` (the codec) and ``bisca.v1`` (generated from the
``.proto`` files at build time, never committed).  ``bisca`` stays a namespace package, so
the import names are the same here and in the arena (the ``bisca`` distribution, which ships
only ``bisca.server`` and depends on this one).

It builds in two places:

* **in a clone** (``pip install ./clients/python``): the engine and the contract are read
  where the project keeps them, ``../../engine/bisca/engine`` and ``../../proto/bisca``;
* **from its own sdist**: ``sdist`` copies those folders into the archive under ``bisca/``,
  so the archive builds with nothing beside it.

The engine's hot modules are compiled with mypyc on the way (``bisca/engine/_native.py`` says
how the compiled and the plain engine are chosen at import): into the wheel's
``bisca/engine/_compiled/``, or, for an editable install, into that folder of the tree (ignored
by git).  When mypyc or a C compiler is missing, or ``BISCA_PURE=1`` is set, the install goes on
with the plain-Python engine, and one line says so.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = Path(__file__).resolve().parent
CLONE = HERE.parent.parent

#: The parts a bot needs that live elsewhere in a clone: package -> its folder there.
FROM_THE_CLONE = {
    "bisca.engine": CLONE / "engine" / "bisca" / "engine",
    "bisca.wire": CLONE / "proto" / "bisca" / "wire",
    "bisca.v1": CLONE / "proto" / "bisca" / "v1",
}
IN_A_CLONE = not (HERE / "bisca" / "engine").is_dir()


def package_folders() -> dict[str, Path]:
    """Each top package of the distribution and the folder it is built from."""
    folders = {"bisca.client": HERE / "bisca" / "client"}
    for package, folder in FROM_THE_CLONE.items():
        folders[package] = folder if IN_A_CLONE else HERE.joinpath(*package.split("."))
    return folders


def packages_and_folders() -> tuple[list[str], dict[str, str]]:
    """Every package (a folder with ``__init__.py``) and setuptools' ``package_dir``."""
    packages: list[str] = []
    package_dir: dict[str, str] = {}
    for package, folder in package_folders().items():
        package_dir[package] = os.path.relpath(folder, HERE)
        for init in sorted(folder.rglob("__init__.py")):
            parts = init.parent.relative_to(folder).parts
            if "node_modules" in parts or any(part.startswith(".") for part in parts):
                continue
            packages.append(".".join((package, *parts)))
    return packages, package_dir


def generate_protos() -> None:
    """Run protoc on the ``.proto`` files of ``bisca.v1`` and put the Python code beside them
    (their folder is the ``bisca.v1`` package, so protoc's ``from bisca.v1 import ...``
    resolves).  grpcio-tools is a build requirement.

    protoc writes into a scratch folder first: in a clone, the folder beside the ``.proto``
    files is the one every process of the arena imports ``bisca.v1`` from, and protoc truncates
    a file before writing it again, so a bot starting during a rebuild could import an empty
    ``bestia_pb2`` (and fail on the next module's "Depends on file 'bisca/v1/bestia.proto'").
    Only a file that changed is then put in place (:func:`put_whole`)."""
    from grpc_tools import protoc  # only at build time: the layout test imports this file

    v1 = package_folders()["bisca.v1"]
    include_root = v1.parent.parent  # the folder that holds bisca/v1
    protos = sorted(str(path.relative_to(include_root)) for path in v1.glob("*.proto"))
    bundled = Path(protoc.__file__).resolve().parent / "_proto"
    scratch_parent = HERE / "build"  # setuptools' own, ignored by git
    scratch_parent.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="protoc-", dir=scratch_parent) as scratch:
        arguments = [
            "grpc_tools.protoc",
            f"-I{include_root}",
            f"-I{bundled}",
            f"--python_out={scratch}",
            f"--pyi_out={scratch}",
            f"--grpc_python_out={scratch}",
            *protos,
        ]
        if protoc.main(arguments) != 0:
            raise SystemExit("protoc failed on " + " ".join(protos))
        for made in sorted(Path(scratch, "bisca", "v1").iterdir()):
            kept = v1 / made.name
            content = made.read_bytes()
            if not kept.is_file() or kept.read_bytes() != content:
                put_whole(content, kept, kept if kept.is_file() else made)


def put_whole(content: bytes, path: Path, mode_of: Path) -> None:
    """Write ``path`` so that a reader sees the old file or the new one, whole: the bytes go to
    a hidden file beside it (the same folder: the same file system), which is then renamed over
    it.  It takes the permissions of ``mode_of`` (the file it replaces keeps its own, as protoc
    writing in place kept them)."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(content)
        shutil.copymode(mode_of, temporary)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def engine_builder() -> ModuleType:
    """The engine's ``_native`` module, by path (the engine is not importable at build time)."""
    path = package_folders()["bisca.engine"] / "_native.py"
    spec = importlib.util.spec_from_file_location("bisca_engine_native", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compile_engine(out: Path) -> None:
    """The compiled engine into ``out``; a failure leaves the plain engine and says why (in
    ``out``'s ``build-failed.txt``, which the engine reports, and on standard error)."""
    native = engine_builder()
    try:
        if os.environ.get(native.PURE_SWITCH, "") not in ("", "0"):
            raise RuntimeError(f"{native.PURE_SWITCH} is set")
        done = native.build(out)
        print(f"bisca-client: engine {done} with mypyc", file=sys.stderr)
    except (RuntimeError, OSError) as error:
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True, exist_ok=True)
        (out / native.FAILED).write_text(f"{error}\n")
        print(f"bisca-client: WARNING: engine not compiled ({error}); the plain-Python engine "
              "runs", file=sys.stderr)  # fmt: skip


class BuildPyWithProtos(build_py):
    def run(self) -> None:
        generate_protos()
        super().run()
        engine = package_folders()["bisca.engine"]
        if self.editable_mode:
            compile_engine(engine / "_compiled")
        else:
            compile_engine(Path(self.build_lib, "bisca", "engine", "_compiled"))


class SdistWithTheClonesParts(sdist):
    """An sdist that builds on its own: the parts read from the clone are copied in."""

    def make_release_tree(self, base_dir: str, files: list[str]) -> None:
        inside = [name for name in files if not name.startswith("..")]
        super().make_release_tree(base_dir, inside)
        if IN_A_CLONE:
            for package, folder in FROM_THE_CLONE.items():
                shutil.copytree(
                    folder,
                    Path(base_dir).joinpath(*package.split(".")),
                    ignore=shutil.ignore_patterns("__pycache__", "*_pb2*", "_compiled"),
                )


if __name__ == "__main__":  # as setuptools runs it (the layout test imports it)
    packages, package_dir = packages_and_folders()
    setup(
        cmdclass={"build_py": BuildPyWithProtos, "sdist": SdistWithTheClonesParts},
        package_dir=package_dir,
        packages=packages,
    )
