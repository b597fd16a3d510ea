"""The local dashboard (`specd ui`): an ASGI app over the same core functions as the CLI verbs."""
