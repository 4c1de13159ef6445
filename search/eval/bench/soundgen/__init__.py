"""The generator of captioned compositional audio (``fortekit bench generate``); see docs/soundgen.md."""
