"""An actor that fits on no Ray node is refused (E822) instead of being waited for forever.

Issue 43, case 13: ``fol-refine q.txt -o out.jsonl --ray --ray-cpus 2 --ray-actor-cpus 1e9``
never finished and printed nothing: Ray never places an actor that asks for more CPUs than any
node has, and a Ray Data job waits for it. A local Ray's size is known before it starts, so the
options are refused there (no Ray is started in these tests); a cluster's, once it is reached
(:meth:`RayCluster.check_fits`, called before a job starts its actors).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from conftest import run_fol_refine

from fortekit.errors import DistributedError
from fortekit.search.cli.ray_options import settings_from_args
from fortekit.search.distributed.cluster import RayCluster
from fortekit.search.distributed.options import RaySettings, check_actor_size


def test_fol_refine_refuses_an_actor_larger_than_the_local_ray_before_it_starts(tmp_path: Path) -> None:
    queries, output = tmp_path / "q.txt", tmp_path / "out.jsonl"
    queries.write_text("a dog barks\n", encoding="utf-8")
    started = time.perf_counter()
    status, _, err = run_fol_refine(str(queries), "-o", str(output), "--ray", "--ray-cpus", "2",
                                    "--ray-actor-cpus", "1e9")
    assert time.perf_counter() - started < 60  # refused, not waited on
    assert status == 2 and "[E822] --ray-actor-cpus asks 1e+09 CPUs for each model actor" in err
    assert "a local Ray with 2 CPUs has (2)" in err and "Give at most 2" in err
    assert not output.exists()


def test_the_limit_is_the_local_cpus_given_or_this_machines() -> None:
    from fortekit.search.cli import build_refine_parser

    parse = build_refine_parser().parse_args
    fits = settings_from_args(parse(["q.txt", "--ray", "--ray-cpus", "2", "--ray-actor-cpus", "2"]))
    assert fits == RaySettings(cpus=2, actor_cpus=2.0)
    with pytest.raises(DistributedError, match=r"\[E822\] --ray-actor-cpus asks 2.5 CPUs"):
        settings_from_args(parse(["q.txt", "--ray", "--ray-cpus", "2", "--ray-actor-cpus", "2.5"]))
    machine = max(1, os.cpu_count() or 1)
    with pytest.raises(DistributedError, match=rf"a local Ray with {machine} CPUs has \({machine}\)"):
        settings_from_args(parse(["q.txt", "--ray", "--ray-actor-cpus", str(machine + 1)]))
    # a cluster's nodes are known only once it is reached: checked then (below), not here
    cluster = parse(["q.txt", "--ray", "10.0.0.5:6379", "--ray-actor-cpus", "64"])
    assert settings_from_args(cluster) is not None


def test_a_cluster_refuses_an_actor_that_fits_on_none_of_its_nodes() -> None:
    cluster = RayCluster(cpus=16.0, gpus=0.0, where="the Ray cluster at 10.0.0.5:6379", node_cpus=8.0,
                         node_gpus=0.0)
    cluster.check_fits(RaySettings(address="auto", actor_cpus=8.0))
    with pytest.raises(DistributedError, match=r"--ray-actor-cpus asks 12 CPUs .* more than one node of the "
                                               r"Ray cluster at 10.0.0.5:6379 has \(8\)"):
        cluster.check_fits(RaySettings(address="auto", actor_cpus=12.0))  # 16 in all, but 8 a node
    with pytest.raises(DistributedError, match=r"--ray-gpus asks 1 GPUs .* has \(0\).*Give a Ray with GPUs"):
        cluster.check_fits(RaySettings(address="auto", gpus=1.0))
    RayCluster(cpus=2.0, gpus=0.0, where="here").check_fits(RaySettings())  # sized to fit by default


def test_check_actor_size_leaves_unknown_gpus_alone() -> None:
    check_actor_size(RaySettings(gpus=4.0), 2, None, where="a local Ray with 2 CPUs")
