"""Stage 1 search, the audio index, Stages 2-3, evaluation and the command-line tools."""
