"""V_audio: the audio predicate vocabulary, its loader and three-tier grounding (issue 3)."""
