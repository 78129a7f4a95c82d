"""Python code generated from the ``.proto`` files beside this one (``bisca.v1``)."""
