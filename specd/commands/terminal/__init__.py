"""The terminal's rendering (rich) for the verbs in specd/commands/; `specd ui` is the web dashboard, in specd/web/.

The core never imports this package.
"""
