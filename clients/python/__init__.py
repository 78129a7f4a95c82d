"""The Python bot SDK: write a bot as one function from an action request to an action."""
