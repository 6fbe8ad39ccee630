"""The problem of one control step: its structure, and the workspace that owns its buffers."""
