"""Built-in backbones: ``minilm``, ``hf-clap``, ``laion-clap`` and ``msclap``.

Each module imports torch and its model package only when a backbone is built, so the
registry can list them cheaply. Get one with :func:`fortekit.plugins.get_backbone`.
"""
