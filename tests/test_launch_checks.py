"""Launchers field by field, without a GPU: the defaults each launcher's environment falls
back on, the refusals' exact lines, the bounds on waits at their edges, and the
connection's calls named in what they say (test_cluster.py has the common paths).
Expected values are worked out by hand in the comments."""

from __future__ import annotations

import threading
import time

import pytest

from reducebench.core.errors import UsageError
from reducebench.multigpu.launch import (MPI, SLURM, TORCHRUN, BoundedComm, LocalComm, Layout,
                                         Unreachable, World, bounded, device_for, first_host,
                                         layout, print_line, timeout_from, wait_until,
                                         world_from_env)

TORCH_ONE = {"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0"}
SLURM_STEP = {"SLURM_PROCID": "0", "SLURM_STEP_ID": "0"}


def refusal(env) -> str:
    with pytest.raises(UsageError) as caught:
        world_from_env(env)
    return str(caught.value)


# -- what each launcher leaves out -----------------------------------------------------------------

def test_a_torchrun_world_of_one_needs_no_address_and_takes_the_defaults():
    assert world_from_env(TORCH_ONE) == World(TORCHRUN, 0, 1, 0, 1, 0, 1, "torch", "", 29500)
    # blank counts as unset
    assert world_from_env({**TORCH_ONE, "LOCAL_WORLD_SIZE": "  "}).local_size == 1


def test_torchrun_counts_nodes_by_whole_division_rounded_up():
    # 7 ranks over 2 named nodes are 4 a node: rank 6 is on node 1
    world = world_from_env({"RANK": "6", "WORLD_SIZE": "7", "LOCAL_RANK": "2",
                            "GROUP_WORLD_SIZE": "2", "MASTER_ADDR": "h"})
    assert (world.local_size, world.node, world.nodes) == (4, 1, 2)
    # 8 ranks, 3 a node: 3 nodes (the last with 2)
    world = world_from_env({"RANK": "7", "WORLD_SIZE": "8", "LOCAL_RANK": "1",
                            "LOCAL_WORLD_SIZE": "3", "MASTER_ADDR": "h"})
    assert (world.node, world.nodes) == (2, 3)


def test_a_rank_field_is_read_or_refused_by_name():
    assert refusal({**TORCH_ONE, "WORLD_SIZE": ""}) == \
        "the launcher set no WORLD_SIZE: cannot tell this process's rank"


def test_open_mpi_without_local_figures_is_one_node():
    world = world_from_env({"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "4"})
    assert world == World(MPI, 3, 4, 3, 4, 0, 1, "mpi")


def test_open_mpi_nodes_of_one_rank_and_an_uneven_last_node():
    # one rank a node: rank 3 of 4 is on node 3 of 4
    world = world_from_env({"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "4",
                            "OMPI_COMM_WORLD_LOCAL_RANK": "0",
                            "OMPI_COMM_WORLD_LOCAL_SIZE": "1"})
    assert (world.node, world.nodes) == (3, 4)
    # 5 ranks, 2 a node: rank 4 is alone on node 2 of 3
    world = world_from_env({"OMPI_COMM_WORLD_RANK": "4", "OMPI_COMM_WORLD_SIZE": "5",
                            "OMPI_COMM_WORLD_LOCAL_RANK": "0",
                            "OMPI_COMM_WORLD_LOCAL_SIZE": "2"})
    assert (world.node, world.nodes) == (2, 3)


def test_a_slurm_step_of_one_task_takes_the_defaults():
    assert world_from_env(SLURM_STEP) == World(SLURM, 0, 1, 0, 1, 0, 1, "torch", "", 29500)
    # the older name of the step id
    assert world_from_env({"SLURM_PROCID": "0", "SLURM_STEPID": "0"}).launcher == SLURM


def test_slurm_falls_back_on_the_jobs_figures_and_an_even_split():
    job = {"SLURM_PROCID": "5", "SLURM_NTASKS": "6", "SLURM_LOCALID": "1", "SLURM_NODEID": "1",
           "SLURM_NNODES": "2", "SLURM_STEP_ID": "0", "SLURM_JOB_NODELIST": "gpu[07-08]",
           "SLURM_TASKS_PER_NODE": "4,2"}
    world = world_from_env(job)
    assert (world.local_size, world.master_addr) == (2, "gpu07")
    # no tasks per node: 5 tasks on 2 nodes are at most 3 a node
    uneven = {k: v for k, v in job.items() if k != "SLURM_TASKS_PER_NODE"}
    world = world_from_env({**uneven, "SLURM_NTASKS": "5", "SLURM_PROCID": "4"})
    assert world.local_size == 3
    # MASTER_ADDR wins over the node list
    assert world_from_env({**job, "MASTER_ADDR": "login1"}).master_addr == "login1"


def test_variables_of_another_launcher_do_not_make_torchrun():
    slurm = {**SLURM_STEP, "SLURM_NTASKS": "1"}
    assert world_from_env({**slurm, "LOCAL_RANK": "0"}).launcher == SLURM
    assert world_from_env({**slurm, "RANK": "0"}).launcher == SLURM


def test_the_first_host_of_a_list_that_starts_with_a_single_number():
    assert first_host("node[3,5-7]") == "node3"


def test_a_rows_rank_fields():
    world = World(TORCHRUN, 3, 8, 1, 2, 1, 4, "torch", "h", 1)
    assert world.rank_fields() == {"rank": 3, "local_rank": 1, "world_size": 8}


# -- refusals, said exactly ----------------------------------------------------------------------

def test_a_world_of_two_without_an_address_is_refused_saying_what_to_set():
    env = {"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0"}
    assert refusal(env) == ("torchrun: no MASTER_ADDR (nor a node list) to reach rank 0 at; "
                            "set MASTER_ADDR and MASTER_PORT")


def test_too_many_ranks_for_this_nodes_gpus_is_said_exactly():
    world = World(TORCHRUN, 3, 4, 3, 4, 0, 1, "torch", "h", 1)
    with pytest.raises(UsageError) as caught:
        device_for(world, visible=2)
    assert str(caught.value) == ("4 ranks on this node but it has 2 GPU(s): one rank per GPU "
                                 "(e.g. torchrun --nproc-per-node 2)")


@pytest.mark.parametrize("env, option, line", [
    ({}, 0.0, "--timeout 0.0: expected seconds above 0"),
    ({"REDUCEBENCH_TIMEOUT": "-1"}, None, "REDUCEBENCH_TIMEOUT -1.0: expected seconds above 0"),
    ({"REDUCEBENCH_TIMEOUT": "soon"}, None, "REDUCEBENCH_TIMEOUT='soon' is not a number of "
                                            "seconds"),
])
def test_a_timeout_that_is_no_time_is_said_exactly(env, option, line):
    with pytest.raises(UsageError) as caught:
        timeout_from(env, option)
    assert str(caught.value) == line


def test_a_timeout_under_a_second_is_a_timeout():
    assert timeout_from({}, 0.5) == 0.5


def test_the_layout_of_no_ranks():
    assert layout([]) == Layout(0, 0, ())


# -- bounded waits at their edges --------------------------------------------------------------------

def test_the_helper_thread_is_a_named_daemon():
    seen = bounded(lambda: threading.current_thread(), "gathering the rows", 5.0)
    assert seen.name == "reducebench: gathering the rows" and seen.daemon


def test_a_wait_of_exactly_the_bound_is_not_over_it():
    # the clock says 3 s have passed from the first poll on: not more than 3 s, so the
    # call (done after about 0.15 s) is awaited; the same with wait_until
    done = threading.Event()
    threading.Timer(0.15, done.set).start()
    times = iter([0.0] + [3.0] * 10_000)
    assert bounded(lambda: done.wait(5.0), "x", 3.0, clock=lambda: next(times)) is True
    polls = iter([False, False, True])
    ticks = iter([0.0, 3.0, 3.0, 3.0])
    wait_until(lambda: next(polls), "x", 3.0, clock=lambda: next(ticks), pause=0)


def test_a_bound_is_kept_to_a_fraction_of_a_second():
    # bounded polls every 0.05 s, wait_until every 20 us: a bound of 0.1 s is over
    # well before 1 s (a poll of a second would not be), and three polls of a done() take
    # far less than the 2 s that polls a second apart would
    never = threading.Event()
    began = time.monotonic()
    with pytest.raises(Unreachable):
        bounded(never.wait, "x", 0.1)
    assert time.monotonic() - began < 1.0
    polls = iter([False, False, True])
    began = time.monotonic()
    wait_until(lambda: next(polls), "x", 5.0)
    assert time.monotonic() - began < 1.5


def test_what_a_timed_out_wait_says_in_full():
    with pytest.raises(Unreachable) as caught:
        bounded(threading.Event().wait, "a barrier", 0.1)
    assert str(caught.value) == ("a barrier did not complete within 0.1 s: a rank died, "
                                 "hangs, or cannot reach the others")
    ticks = iter(range(100))
    with pytest.raises(Unreachable) as caught:
        wait_until(lambda: False, "a sample", 3, clock=lambda: next(ticks), pause=0)
    assert str(caught.value) == ("a sample did not complete within 3 s: a rank died, "
                                 "hangs, or cannot reach the others")


# -- the connection's calls -------------------------------------------------------------------------

class Failing(LocalComm):
    """Every call fails at once with `message`."""

    def __init__(self, message: str) -> None:
        self.message = message

    def _fail(self, *args):
        raise RuntimeError(self.message)

    barrier = bcast = gather = allgather = _fail


@pytest.mark.parametrize("call, what", [
    (lambda c: c.barrier(), "a barrier"), (lambda c: c.bcast(1), "a broadcast from rank 0"),
    (lambda c: c.gather(1), "gathering to rank 0"), (lambda c: c.allgather(1), "an all-gather")])
def test_each_call_that_fails_is_named_with_the_first_line_of_its_error(call, what):
    with pytest.raises(Unreachable) as caught:
        call(BoundedComm(Failing("reset by peer\nmore"), 1.0))
    assert str(caught.value) == (f"{what} failed (RuntimeError: reset by peer): a rank died "
                                 "or cannot reach the others")


def test_an_error_without_words_or_with_too_many():
    with pytest.raises(Unreachable) as caught:
        BoundedComm(Failing(""), 1.0).barrier()
    assert str(caught.value) == "a barrier failed (RuntimeError: ): a rank died or cannot " \
                                "reach the others"
    with pytest.raises(Unreachable) as caught:
        BoundedComm(Failing("x" * 300), 1.0).barrier()
    assert f"(RuntimeError: {'x' * 200}): " in str(caught.value)


def test_the_calls_pass_their_objects_on():
    comm = BoundedComm(LocalComm(), 1.0)
    assert comm.gather(7) == [7] and comm.allgather(8) == [8] and comm.bcast(9) == 9


class Closing(LocalComm):
    """Records where and whether close() ran; it takes `seconds`."""

    def __init__(self, seconds: float = 0.0, in_main: bool | None = None) -> None:
        self.seconds, self.thread, self.closed = seconds, None, False
        if in_main is not None:
            self.close_in_main = in_main

    def close(self) -> None:
        self.thread = threading.current_thread()
        time.sleep(self.seconds)
        self.closed = True


def test_closing_runs_in_a_named_helper_thread_and_waits_for_a_quick_close():
    comm = Closing(seconds=0.2)
    BoundedComm(comm, 2.0).close()
    assert comm.closed and comm.thread.name == "reducebench: closing the connection"


def test_a_comm_that_must_close_in_the_main_thread_does():
    comm = Closing(in_main=True)
    BoundedComm(comm, 2.0).close()
    assert comm.closed and comm.thread is threading.main_thread()
    comm = Closing(in_main=False)
    BoundedComm(comm, 2.0).close()
    assert comm.closed and comm.thread is not threading.main_thread()


def test_a_close_that_hangs_is_given_up_within_the_bound():
    comm = Closing(seconds=30.0)
    began = time.monotonic()
    BoundedComm(comm, 0.2).close()
    assert time.monotonic() - began < 2.0 and not comm.closed


def test_a_line_goes_to_stderr(capsys):
    print_line("rank 1 of 2 (h): gone")
    assert capsys.readouterr() == ("", "rank 1 of 2 (h): gone\n")
