"""`specd mcp`: specd as an MCP server over stdio, for Claude Code and any other MCP client.

The tools list tasks, show one, answer a held gate, start a task, cancel it and read its log; the resources are
the tasks' documents. Each calls the same core functions as the CLI verbs and the page, and each answer is
recorded as coming from MCP. Only ``server`` imports the `mcp` SDK: the rest is plain Python, tested as such.
"""
