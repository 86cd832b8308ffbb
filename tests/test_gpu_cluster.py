"""Two GPUs of one host, one process each, started by a launcher (docs/cluster.md):
torchrun --standalone; two single-GPU "nodes" made by two torchrun invocations; the srun
path with SLURM_* set by hand on two processes; mpirun where it exists. A killed rank
ends the others within the bound; SIGTERM to every rank ends each with 130 and rank 0
keeps its rows; two ranks on one GPU are refused. Skipped below 2 GPUs or without torch.

REDUCEBENCH_CLUSTER_LOG, where set, collects every launched command's output (the
device script commits it)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reducebench.results.files import read_results

pytestmark = pytest.mark.gpu

QUICK = ["--max-time", "0.05", "--min-samples", "5"]
TIMEOUT = 10  # --timeout of the failure tests, seconds
RB = [sys.executable, "-m", "reducebench"]


@pytest.fixture(scope="module", autouse=True)
def two_gpus():
    try:
        import cupy
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        pytest.skip(f"no CUDA: {exc}")
    if count < 2:
        pytest.skip(f"needs 2 GPUs; this machine has {count}")
    try:
        import torch.distributed  # noqa: F401
    except ImportError:
        pytest.skip("needs torch.distributed")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torchrun(*args: str) -> list[str]:
    return [sys.executable, "-m", "torch.distributed.run", *args]


def log(title: str, *outputs: str) -> None:
    path = os.environ.get("REDUCEBENCH_CLUSTER_LOG")
    if path:
        with open(path, "a") as handle:
            handle.write(f"\n===== {title}\n" + "\n".join(outputs))


def run(argv: list[str], env: dict | None = None, timeout: float = 240):
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    log(" ".join(argv[1:]), done.stdout, done.stderr, f"exit {done.returncode}")
    return done


def slurm_env(rank: int, port: int, **extra: str) -> dict:
    """What srun gives task `rank` of 2 on one node."""
    return {"SLURM_PROCID": str(rank), "SLURM_NTASKS": "2", "SLURM_LOCALID": str(rank),
            "SLURM_NODEID": "0", "SLURM_NNODES": "1", "SLURM_STEP_ID": "0",
            "SLURM_STEP_NODELIST": "127.0.0.1", "SLURM_STEP_TASKS_PER_NODE": "2",
            "REDUCEBENCH_MASTER_PORT": str(port), **extra}


def start_ranks(args: list[str], tmp_path: Path, port: int, **extra: str):
    procs = []
    for rank in range(2):
        err = open(tmp_path / f"rank{rank}.err", "w")
        procs.append((subprocess.Popen([*RB, *args], stdout=err, stderr=subprocess.STDOUT,
                                       text=True, env={**os.environ,
                                                       **slurm_env(rank, port, **extra)}),
                      tmp_path / f"rank{rank}.err"))
    return procs


def wait_for(path: Path, text: str, limit: float = 120) -> None:
    began = time.monotonic()
    while text not in path.read_text():
        assert time.monotonic() - began < limit, path.read_text()
        time.sleep(0.2)


def assert_verified(path: Path):
    """Every row verified and written by rank 0: the cases of rank 0 alone (1 GPU, for the
    speed-up) and of the world (2 GPUs). Returns the world's rows."""
    frame = read_results(path)
    assert len(frame) and set(frame["status"]) == {"ok"}, frame[["rung", "status", "error"]]
    assert set(frame["gpus"]) == {1, 2}
    assert set(frame["world_size"]) == {2} and set(frame["rank"]) == {0}
    alone = frame[frame["gpus"] == 1]
    assert set(alone["nodes"]) == {1} and set(alone["gpus_per_node"]) == {1}
    assert not alone["cross_node"].any()
    return frame[frame["gpus"] == 2]


def test_torchrun_standalone_two_ranks(tmp_path):
    out = tmp_path / "torchrun.csv"
    done = run(torchrun("--standalone", "--nproc-per-node", "2", "-m", "reducebench",
                        "multigpu", "--size", "2^20,16777219", "--nccl", "--bytes", "2^20",
                        *QUICK, "--out", str(out)))
    assert done.returncode == 0, done.stdout + done.stderr
    frame = assert_verified(out)
    assert set(frame["nodes"]) == {1} and set(frame["gpus_per_node"]) == {2}
    assert not frame["cross_node"].any()
    uuids = [d.split(":")[2] for d in frame["devices"].iloc[0].split(";")]
    assert len(set(uuids)) == 2 and all(u.startswith("GPU-") for u in uuids)
    assert set(frame["gpu_uuid"]) == {uuids[0]}


def test_two_single_gpu_nodes(tmp_path):
    out, port = tmp_path / "nodes.csv", free_port()
    procs = []
    for node in range(2):
        argv = torchrun("--nnodes", "2", "--node-rank", str(node), "--nproc-per-node", "1",
                        "--master-addr", "127.0.0.1", "--master-port", str(port),
                        "-m", "reducebench", "multigpu", "--size", "16777219", "--nccl",
                        "--bytes", "2^20", *QUICK, "--out", str(out))
        procs.append(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True, env={**os.environ,
                                                      "CUDA_VISIBLE_DEVICES": str(node)}))
    outputs = [p.communicate(timeout=240)[0] for p in procs]
    log("two torchrun nodes", *outputs)
    assert [p.returncode for p in procs] == [0, 0], outputs
    frame = assert_verified(out)
    # two launcher nodes of one GPU each, on one host: NCCL's traffic stays on it
    assert set(frame["nodes"]) == {2} and set(frame["gpus_per_node"]) == {1}
    assert not frame["cross_node"].any()


def test_srun_environment_two_tasks(tmp_path):
    out = tmp_path / "srun.csv"
    procs = start_ranks(["multigpu", "--size", "2^24", "--nccl", "--bytes", "2^20", *QUICK,
                         "--out", str(out)], tmp_path, free_port())
    codes = [p.wait(timeout=240) for p, _ in procs]
    log("srun environment", *(f.read_text() for _, f in procs))
    assert codes == [0, 0], [f.read_text() for _, f in procs]
    assert_verified(out)


def test_a_killed_rank_ends_the_other_within_the_bound(tmp_path):
    out = tmp_path / "killed.csv"
    procs = start_ranks(["multigpu", "--size", "2^26,2^27,2^28", "--nccl", "--bytes",
                         "2^26,2^28,2^30", "--max-time", "2", "--rounds", "1", "--timeout", str(TIMEOUT),
                         "--out", str(out)], tmp_path, free_port())
    (rank0, err0), (rank1, _) = procs
    wait_for(err0, "[3/")  # the floors of rank 0 alone and of both ranks done
    rank1.send_signal(signal.SIGKILL)
    killed = time.monotonic()
    code = rank0.wait(timeout=TIMEOUT + 60)
    took = time.monotonic() - killed
    text = err0.read_text()
    log(f"rank 1 killed: rank 0 exit {code} after {took:.1f} s", text)
    assert code == 3, text
    assert took < TIMEOUT + 15, text
    assert "reducebench: rank 0 of 2:" in text and "a rank died" in text
    assert len(read_results(out)) >= 2  # the rows before the kill are kept


def test_sigterm_to_every_rank_exits_130_and_rank_0_keeps_its_rows(tmp_path):
    out = tmp_path / "stopped.csv"
    procs = start_ranks(["multigpu", "--size", "2^26,2^27,2^28", "--nccl", "--bytes",
                         "2^26,2^28,2^30", "--max-time", "2", "--rounds", "1",
                         "--out", str(out)],
                        tmp_path, free_port())
    wait_for(procs[0][1], "[3/")
    for p, _ in procs:  # what srun does with a signal: every task gets it
        p.send_signal(signal.SIGTERM)
    codes = [p.wait(timeout=60) for p, _ in procs]
    log("SIGTERM to both ranks", *(f.read_text() for _, f in procs))
    assert codes == [130, 130], [f.read_text() for _, f in procs]
    assert "interrupted" in procs[0][1].read_text()
    assert len(read_results(out)) >= 2


def test_sigint_to_torchrun_stops_every_rank(tmp_path):
    out = tmp_path / "torchrun_int.csv"
    err = tmp_path / "torchrun.err"
    with open(err, "w") as handle:
        proc = subprocess.Popen(torchrun("--standalone", "--nproc-per-node", "2", "-m",
                                         "reducebench", "multigpu", "--size", "2^26,2^27,2^28",
                                         "--nccl", "--bytes", "2^26,2^28,2^30",
                                         "--max-time", "2", "--rounds", "1",
                                         "--out", str(out)),
                                stdout=handle, stderr=subprocess.STDOUT, text=True)
        wait_for(err, "[3/")
        proc.send_signal(signal.SIGINT)
        began = time.monotonic()
        proc.wait(timeout=90)
    log(f"SIGINT to torchrun: exit {proc.returncode} after {time.monotonic() - began:.1f} s",
        err.read_text())
    assert "interrupted" in err.read_text()
    assert len(read_results(out)) >= 2


def test_two_ranks_on_one_gpu_are_refused(tmp_path):
    procs = start_ranks(["multigpu", "--size", "2^20", *QUICK, "--out",
                         str(tmp_path / "x.csv")], tmp_path, free_port(),
                        CUDA_VISIBLE_DEVICES="0")
    codes = [p.wait(timeout=120) for p, _ in procs]
    texts = [f.read_text() for _, f in procs]
    log("two ranks on one GPU", *texts)
    assert codes == [2, 2], texts
    assert all("ranks 0 and 1 are both on GPU" in t for t in texts)
    assert not (tmp_path / "x.csv").exists()


def test_the_fleet_check_under_torchrun(tmp_path):
    out = tmp_path / "fleet.csv"
    done = run(torchrun("--standalone", "--nproc-per-node", "2", "-m", "reducebench", "run",
                        "--device", "all", "--size", "2^22", "--rung", "vector_load,cub",
                        *QUICK, "--out", str(out)))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the fleet check" in done.stdout and "Mann-Whitney" in done.stdout
    frame = read_results(out)
    assert sorted(set(frame["rank"].astype(int))) == [0, 1]
    assert set(frame["status"]) == {"ok"}
    per_rank = frame.groupby("rank")
    assert per_rank["gpu_uuid"].nunique().max() == 1 and frame["gpu_uuid"].nunique() == 2
    assert set(frame["local_rank"].astype(int)) == {0, 1} and frame["host"].notna().all()
    assert len(set(frame["seed"])) == 1  # one seed for every GPU


def test_a_launched_run_fills_speed_up_and_efficiency_from_rank_0_alone(tmp_path):
    """Rank 0 alone times the same sharded sum over the whole n (gpus = 1) while rank 1
    waits; every row of both ranks then gets speed-up = one GPU's median / its median and
    efficiency = speed-up / 2, in the CSV and the table."""
    out = tmp_path / "scaling.csv"
    done = run(torchrun("--standalone", "--nproc-per-node", "2", "-m", "reducebench",
                        "multigpu", "--size", "2^20,2^28", *QUICK, "--out", str(out)))
    assert done.returncode == 0, done.stdout + done.stderr
    world = assert_verified(out)
    frame = read_results(out)
    sharded = frame[frame["case"] == "sharded_sum"]
    one_gpu = sharded[sharded["gpus"] == 1].set_index("n")["median_us"]
    both = sharded[sharded["gpus"] == 2].set_index("n")
    assert sorted(one_gpu.index) == sorted(both.index) == [2**20, 2**28]
    for n, row in both.iterrows():
        assert row["speedup"] == pytest.approx(one_gpu[n] / row["median_us"], rel=1e-9)
        assert row["efficiency"] == pytest.approx(row["speedup"] / 2, rel=1e-9)
    # 1 GiB read on one GPU against half of it on each of two: clearly faster
    assert both.loc[2**28, "speedup"] > 1.2, both[["median_us", "speedup"]]
    # rank 0 alone ran on rank 0's GPU, the first of the world's
    alone_device = sharded[sharded["gpus"] == 1]["devices"].iloc[0]
    assert alone_device == world["devices"].iloc[0].split(";")[0]
    figures = [f"{both.loc[2**28, column]:.2f}" for column in ("speedup", "efficiency")]
    assert any(all(f in line for f in figures) for line in done.stdout.splitlines()
               if "2^28" in line), (figures, done.stdout)


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="no mpirun on this machine")
def test_mpirun_two_ranks(tmp_path):
    out = tmp_path / "mpirun.csv"
    root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    done = run(["mpirun", "-n", "2", *root, "-x", "PYTHONPATH", *RB, "multigpu", "--size",
                "2^24", "--nccl", "--bytes", "2^20", *QUICK, "--out", str(out)])
    assert done.returncode == 0, done.stdout + done.stderr
    assert_verified(out)
