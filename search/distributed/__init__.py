"""The batch work as Ray Data jobs: ``fortekit index build --audio DIR --ray`` and ``fol-refine --ray``.

The commands run in one process by default; ``--ray`` runs the same per-batch functions as
stages of a Ray Data pipeline, on a local Ray (``--ray``) or on a cluster (``--ray HOST:PORT``),
and writes the same output the one-process path writes (docs/scale.md, "Ray for the batch work"):

* :func:`fortekit.search.distributed.index_build.build_index_with_ray`: reading and resampling
  (CPU tasks), captioning and embedding (actors that build their model once), parsing (CPU tasks),
  then the index assembled on the driver with the code of :class:`~fortekit.search.index.AudioIndex`;
* :class:`fortekit.search.distributed.refine.RayRefineRunner`: ``fol-refine``'s batches of queries
  to actors that each build the refiner once, written in order, resumable as in one process.

Nothing here imports Ray until a job asks for it (:func:`fortekit.search.distributed.cluster.require_ray`):
``import fortekit.search.distributed`` and the command-line parsers stay light, and Ray is an
optional extra (``pip install 'fortekit[ray]'``).

Example:
    >>> from fortekit.search.distributed.options import RaySettings
    >>> RaySettings(address=None, cpus=2).describe()
    'a local Ray with 2 CPUs'
"""

from __future__ import annotations

__all__: list[str] = []
