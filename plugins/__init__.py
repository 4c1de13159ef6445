"""Plug-in registry and protocols for backbones, elaborators and captioners (issue 6)."""
