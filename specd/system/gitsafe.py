"""The options every git call of specd's carries: it runs nothing that a file inside the project names.

An agent writes the project's tree, so anything git would run on the tree's say is the agent's code run outside
the jail, by specd, with the user's network and keys:
- hooks (``.git/hooks`` is read-only in the jail, but ``core.hooksPath`` may point into the tree: a ``.husky``);
- an fsmonitor program;
- anything of a submodule: its git folder is a file or folder in the tree (``sub/.git``) that an agent can point
  at a config of its own, and a `git status` of the project runs `git status` in each submodule, whose clean
  filter (``filter.<name>.clean``, chosen by the submodule's ``.gitattributes``) runs on any file whose times
  changed. specd never commits a submodule's content (only the project's own files), so it never needs to look
  inside one: diffs and statuses ignore submodules, and no command recurses into them.
``-c`` options reach the git processes git itself starts for submodules (GIT_CONFIG_PARAMETERS), and beat any
config file.
"""

from __future__ import annotations

OPTIONS = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
           "-c", "diff.ignoreSubmodules=all", "-c", "submodule.recurse=false",
           # fetch goes into submodules "on demand" by default, and push as the user's config says
           "-c", "fetch.recurseSubmodules=false", "-c", "push.recurseSubmodules=no")
