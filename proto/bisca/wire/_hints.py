"""The naming and type-hint rules the converters (``_codec.py``) and the compiled serializers
(``_compiled.py``) share, so the two map every engine value the same way."""

from __future__ import annotations

import re
import types
from typing import TypeAlias, Union, get_args, get_origin

#: A type expression of the engine's type hints: a class, ``X | None``, ``tuple[X, ...]``,
#: a ``Literal``.
Annotation: TypeAlias = object


def snake_case(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def union_arms(annotation: Annotation) -> tuple[Annotation, ...] | None:
    if get_origin(annotation) in (Union, types.UnionType):
        return get_args(annotation)
    return None


def item_type(annotation: Annotation) -> Annotation:
    """``X`` of ``X``, ``X | None`` and ``tuple[X, ...]``."""
    arms = union_arms(annotation)
    if arms is not None:
        present = [arm for arm in arms if arm is not type(None)]
        if len(present) != 1:
            raise TypeError(f"no protobuf mapping for the field type {annotation!r}")
        return item_type(present[0])
    if get_origin(annotation) is tuple:
        return item_type(get_args(annotation)[0])
    return annotation
